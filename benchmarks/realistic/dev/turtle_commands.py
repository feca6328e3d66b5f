"""A Logo-style turtle language: a tokenizer, a parser with REPEAT blocks and procedures, and an interpreter that draws."""
# entry: run_scripts(["FD 3 RT 90", "REPEAT 3 [ FD 2 RT 120 ]", "TO HOOK :LEN FD :LEN LT 90 FD 1 END HOOK 2", "PU BK 4 PD RT 45 FD 1", "REPEAT 2 [ FD", "JUMP 3", "TO ZIG :N FD :N RT 90 ZIG :N END ZIG 1", "LT 90 ;"])
# kind: interpreter, parser

import math
import re
from dataclasses import dataclass

TOKEN_RE = re.compile(r"\s*(?:([\[\]])|(:?[A-Za-z]+)|(-?\d+))")
MOVES = {"FD": 1, "BK": -1}
TURNS = {"RT": -1, "LT": 1}
PEN = {"PU": False, "PD": True}
MAX_DEPTH = 3


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple = ()
    body: tuple = ()


@dataclass(frozen=True)
class Procedure:
    name: str
    params: tuple
    body: tuple


class TurtleError(Exception):
    """A mistake in one script: that script stops and the next one runs."""


class SyntaxProblem(TurtleError):
    def __init__(self, message, position):
        self.position = position
        super().__init__(f"{message} at token {position}")


class UnknownCommand(TurtleError):
    """A call of a name that no TO has defined."""


def tokenize(text):
    tokens = []
    text = text.strip()
    pos = 0
    while pos < len(text):
        match = TOKEN_RE.match(text, pos)
        if match is None:
            raise SyntaxProblem(f"unexpected {text[pos:].split()[0]!r}", len(tokens))
        bracket, word, number = match.groups()
        tokens.append(int(number) if number is not None else (bracket or word).upper())
        pos = match.end()
    return tokens


class Parser:
    def __init__(self, tokens, arities):
        self.tokens = tokens
        self.arities = arities
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self):
        token = self.peek()
        if token is None:
            raise SyntaxProblem("unexpected end", self.pos)
        self.pos += 1
        return token

    def argument(self):
        token = self.take()
        if isinstance(token, int) or token.startswith(":"):
            return token
        raise SyntaxProblem(f"expected a number, got {token}", self.pos - 1)

    def block(self, closing=None):
        commands = []
        while (token := self.peek()) is not None:
            if token == closing:
                self.pos += 1
                return tuple(commands)
            commands.append(self.command())
        if closing is not None:
            raise SyntaxProblem(f"missing {closing}", self.pos)
        return tuple(commands)

    def command(self):
        name = self.take()
        if name in MOVES or name in TURNS:
            return Command(name, (self.argument(),))
        if name in PEN:
            return Command(name)
        if name == "REPEAT":
            count = self.argument()
            if self.take() != "[":
                raise SyntaxProblem("expected [", self.pos - 1)
            return Command(name, (count,), self.block("]"))
        if name == "TO":
            title = self.take()
            params = []
            while isinstance(self.peek(), str) and self.peek().startswith(":"):
                params.append(self.take())
            self.arities[title] = len(params)
            return Procedure(title, tuple(params), self.block("END"))
        if name not in self.arities:
            raise UnknownCommand(f"no procedure named {name}")
        return Command(name, tuple(self.argument() for _ in range(self.arities[name])))


class Turtle:
    def __init__(self):
        self.x, self.y = 0.0, 0.0
        self.heading = 90
        self.pen_down = True
        self.trail = []

    def move(self, distance):
        radians = math.radians(self.heading)
        nx = round(self.x + distance * math.cos(radians), 3) + 0.0
        ny = round(self.y + distance * math.sin(radians), 3) + 0.0
        if self.pen_down:
            self.trail.append(((self.x, self.y), (nx, ny)))
        self.x, self.y = nx, ny

    def turn(self, degrees):
        self.heading = (self.heading + degrees) % 360

    def __repr__(self):
        pen = "down" if self.pen_down else "up"
        return f"Turtle(at=({self.x:g}, {self.y:g}), heading={self.heading}, pen={pen})"


class Interpreter:
    def __init__(self):
        self.turtle = Turtle()
        self.procedures = {}
        self.depth = 0

    def value(self, arg, scope):
        if isinstance(arg, int):
            return arg
        if arg not in scope:
            raise TurtleError(f"{arg} has no value here")
        return scope[arg]

    def run(self, commands, scope):
        for command in commands:
            if isinstance(command, Procedure):
                self.procedures[command.name] = command
            else:
                self.execute(command, scope)

    def execute(self, command, scope):
        args = [self.value(arg, scope) for arg in command.args]
        if command.name in MOVES:
            self.turtle.move(MOVES[command.name] * args[0])
        elif command.name in TURNS:
            self.turtle.turn(TURNS[command.name] * args[0])
        elif command.name in PEN:
            self.turtle.pen_down = PEN[command.name]
        elif command.name == "REPEAT":
            for _ in range(args[0]):
                self.run(command.body, scope)
        else:
            self.call(self.procedures[command.name], args)

    def call(self, procedure, args):
        if self.depth >= MAX_DEPTH:
            raise TurtleError(f"{procedure.name} nests deeper than {MAX_DEPTH}")
        self.depth += 1
        try:
            self.run(procedure.body, dict(zip(procedure.params, args, strict=True)))
        finally:
            self.depth -= 1


def path_length(trail):
    return round(sum(math.dist(start, end) for start, end in trail), 3)


def run_scripts(scripts):
    interpreter = Interpreter()
    arities = {}
    log = []
    for number, script in enumerate(scripts, 1):
        drawn_before = len(interpreter.turtle.trail)
        try:
            program = Parser(tokenize(script), arities).block()
            interpreter.run(program, {})
        except SyntaxProblem as exc:
            log.append(f"{number}: syntax error: {exc}")
        except TurtleError as exc:
            log.append(f"{number}: {type(exc).__name__}: {exc}")
        else:
            log.append(f"{number}: ok")
        finally:
            drawn = len(interpreter.turtle.trail) - drawn_before
            print(f"script {number}: {drawn} segments, {interpreter.turtle!r}")
    return {"log": log, "segments": len(interpreter.turtle.trail), "length": path_length(interpreter.turtle.trail)}
