"""A small Forth interpreter: a data stack, user-defined words, IF/ELSE/THEN and DO/LOOP."""
# entry: run_forth(": square dup * ; : cube dup square * ; 3 cube . : countdown 0 do i . loop ; 4 countdown : sign dup 0 < if drop -1 else 0 > if 1 else 0 then then ; -7 sign . 0 sign . 5 sign . 10 3 /mod . . 2 3 4 rot . . . 1 0 / .")
# kind: interpreter, parser
from collections import deque

MAX_STACK = 64
MAX_CALL_DEPTH = 50


class ForthError(Exception):
    pass


class StackUnderflow(ForthError):
    def __init__(self, word):
        super().__init__(f"stack underflow in {word!r}")


class UnknownWord(ForthError):
    pass


def tokenize(source):
    return deque(source.lower().split())


def compile_definition(tokens):
    """Read `name body... ;` after a `:` and return (name, body)."""
    if not tokens:
        raise ForthError("definition needs a name")
    name = tokens.popleft()
    body = []
    while tokens:
        token = tokens.popleft()
        if token == ";":
            break
        body.append(token)
    else:
        raise ForthError(f"definition of {name!r} never ends")
    return name, body


def find_matching(body, start, openers, closers):
    """Index of the word in closers that balances the opener before start, or -1 at the end of body."""
    depth = 0
    for index in range(start, len(body)):
        word = body[index]
        if word in openers:
            depth += 1
        elif word in closers and depth == 0:
            return index
        elif word in closers and word != "else":
            depth -= 1
    return -1


class Forth:
    def __init__(self):
        self.stack = []
        self.words = {}
        self.output = []
        self.loops = []
        self.depth = 0
        self.builtins = {
            "+": self.binary(lambda a, b: a + b),
            "-": self.binary(lambda a, b: a - b),
            "*": self.binary(lambda a, b: a * b),
            "/": self.binary(self.divide),
            "<": self.binary(lambda a, b: -1 if a < b else 0),
            ">": self.binary(lambda a, b: -1 if a > b else 0),
            "=": self.binary(lambda a, b: -1 if a == b else 0),
            "dup": self.dup,
            "drop": lambda: self.pop("drop"),
            "swap": self.swap,
            "rot": self.rot,
            "/mod": self.slash_mod,
            ".": lambda: self.output.append(str(self.pop("."))),
            "i": lambda: self.push(self.loops[-1]),
        }

    def push(self, value):
        if len(self.stack) >= MAX_STACK:
            raise ForthError("stack overflow")
        self.stack.append(value)

    def pop(self, word):
        if not self.stack:
            raise StackUnderflow(word)
        return self.stack.pop()

    def binary(self, operation):
        def apply():
            b = self.pop("binary")
            a = self.pop("binary")
            self.push(operation(a, b))

        return apply

    @staticmethod
    def divide(a, b):
        if b == 0:
            raise ForthError("division by zero")
        return a // b

    def dup(self):
        value = self.pop("dup")
        self.push(value)
        self.push(value)

    def swap(self):
        b, a = self.pop("swap"), self.pop("swap")
        self.push(b)
        self.push(a)

    def rot(self):
        c, b, a = self.pop("rot"), self.pop("rot"), self.pop("rot")
        for value in (b, c, a):
            self.push(value)

    def slash_mod(self):
        b, a = self.pop("/mod"), self.pop("/mod")
        if b == 0:
            raise ForthError("division by zero")
        quotient, remainder = divmod(a, b)
        self.push(remainder)
        self.push(quotient)

    def execute_word(self, word):
        if word in self.words:
            self.depth += 1
            if self.depth > MAX_CALL_DEPTH:
                raise ForthError("call depth exceeded")
            try:
                self.execute_body(self.words[word])
            finally:
                self.depth -= 1
        elif word in self.builtins:
            self.builtins[word]()
        else:
            try:
                self.push(int(word))
            except ValueError:
                raise UnknownWord(f"unknown word {word!r}") from None

    def execute_body(self, body):
        pc = 0
        while pc < len(body):
            word = body[pc]
            if word == "if":
                else_at = find_matching(body, pc + 1, ("if",), ("else", "then"))
                then_at = else_at
                if body[else_at] == "else":
                    then_at = find_matching(body, else_at + 1, ("if",), ("then",))
                if self.pop("if") != 0:
                    self.execute_body(body[pc + 1:else_at])
                elif else_at != then_at:
                    self.execute_body(body[else_at + 1:then_at])
                pc = then_at + 1
                continue
            if word == "do":
                loop_at = find_matching(body, pc + 1, ("do",), ("loop",))
                start, limit = self.pop("do"), self.pop("do")
                for counter in range(start, limit):
                    self.loops.append(counter)
                    self.execute_body(body[pc + 1:loop_at])
                    self.loops.pop()
                pc = loop_at + 1
                continue
            self.execute_word(word)
            pc += 1

    def run(self, source):
        tokens = tokenize(source)
        while tokens:
            token = tokens.popleft()
            if token == ":":
                name, body = compile_definition(tokens)
                self.words[name] = body
                continue
            self.execute_word(token)


def run_forth(source):
    forth = Forth()
    try:
        forth.run(source)
        status = "ok"
    except ForthError as error:
        status = f"error: {error}"
    finally:
        print(" ".join(forth.output))
    return status, forth.stack, sorted(forth.words)
