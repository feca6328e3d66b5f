"""A tiny expression language: regex tokenizer, recursive-descent parser to dataclass nodes, closures and environments."""
# entry: run_program(["let adder = fun (n) -> fun (x) -> x + n", "adder(3)(4) # seven", "let fact = fun (n) -> if n < 2 then 1 else n * fact(n - 1)", "fact(2)", "7 / 0", "ghost", "(1 +"])
# kind: parser, interpreter

import json
import re
from collections import Counter, defaultdict, deque
from dataclasses import dataclass

TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<keyword>(?:let|fun|if|then|else)\b)|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>->|==|<=|[-+*/%<()\[\],=])|(?P<comment>#.*)|(?P<junk>\S))"
)
PRECEDENCE = {"==": 1, "<": 1, "<=": 1, "+": 2, "-": 2, "*": 3, "/": 3, "%": 3}
OPERATORS = {
    "==": lambda a, b: a == b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
    "%": lambda a, b: a % b,
}
MAX_DEPTH = 40


class LangError(Exception):
    """An error in a program of the language, reported with the line it comes from."""


class ParseError(LangError):
    def __init__(self, message, token):
        where = f"'{token.text}'" if token is not None else "end of input"
        super().__init__(f"parse error at {where}: {message}")
        self.token = token


class UnboundName(LangError):
    def __init__(self, name):
        super().__init__(f"name '{name}' is not defined")
        self.name = name


class EvalError(LangError):
    pass


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    column: int


@dataclass
class Num:
    value: int


@dataclass
class Var:
    name: str


@dataclass
class Unary:
    op: str
    operand: object


@dataclass
class BinOp:
    op: str
    left: object
    right: object


@dataclass
class If:
    test: object
    then: object
    orelse: object


@dataclass
class Lambda:
    params: list
    body: object


@dataclass
class Call:
    func: object
    args: list


@dataclass
class ListLit:
    items: list


@dataclass
class Let:
    name: str
    value: object


def tokenize(source):
    for match in TOKEN_RE.finditer(source):
        kind = match.lastgroup
        yield Token(kind, match.group(kind), match.start(kind))


def significant(tokens):
    for token in tokens:
        if token.kind != "comment":
            yield token


class Parser:
    def __init__(self, tokens):
        self.tokens = deque(tokens)

    def peek(self):
        return self.tokens[0] if self.tokens else None

    def advance(self):
        if not self.tokens:
            raise ParseError("unexpected end", None)
        return self.tokens.popleft()

    def accept(self, text):
        if self.tokens and self.tokens[0].text == text and self.tokens[0].kind in ("op", "keyword"):
            return self.tokens.popleft()
        return None

    def expect(self, text):
        token = self.accept(text)
        if token is None:
            raise ParseError(f"expected '{text}'", self.peek())
        return token

    def statement(self):
        if self.accept("let"):
            name = self.advance()
            if name.kind != "name":
                raise ParseError("expected a name after let", name)
            self.expect("=")
            node = Let(name.text, self.expression())
        else:
            node = self.expression()
        if self.peek() is not None:
            raise ParseError("unexpected token", self.peek())
        return node

    def expression(self):
        head = self.tokens[0].text if self.tokens else None
        if head == "fun":
            self.advance()
            self.expect("(")
            params = self.names()
            self.expect("->")
            return Lambda(params, self.expression())
        if head == "if":
            self.advance()
            test = self.expression()
            self.expect("then")
            then = self.expression()
            self.expect("else")
            return If(test, then, self.expression())
        return self.binary(1)

    def names(self):
        params = []
        while not self.accept(")"):
            if params:
                self.expect(",")
            params.append(self.advance().text)
        return params

    def binary(self, min_precedence):
        """Precedence climbing: operands of operators that bind at least as tightly as min_precedence."""
        node = self.unary()
        while self.tokens and PRECEDENCE.get(self.tokens[0].text, 0) >= min_precedence:
            op = self.advance().text
            node = BinOp(op, node, self.binary(PRECEDENCE[op] + 1))
        return node

    def unary(self):
        if self.tokens and self.tokens[0].text == "-":
            self.advance()
            return Unary("-", self.unary())
        node = self.primary()
        while self.tokens and self.tokens[0].text == "(":
            self.advance()
            node = Call(node, self.arguments(")"))
        return node

    def arguments(self, closing):
        args = []
        while True:
            if self.accept(closing):
                break
            if args:
                self.expect(",")
            args.append(self.expression())
        return args

    def primary(self):
        token = self.advance()
        if token.kind == "num":
            return Num(int(token.text))
        if token.kind == "name":
            return Var(token.text)
        if token.text == "(":
            node = self.expression()
            self.expect(")")
            return node
        if token.text == "[":
            return ListLit(self.arguments("]"))
        raise ParseError("expected a value" if token.kind != "junk" else "unexpected character", token)


class Environment:
    def __init__(self, names=None, parent=None):
        self.names = dict(names or {})
        self.parent = parent

    def lookup(self, name):
        env = self
        while env is not None:
            if name in env.names:
                break
            env = env.parent
        else:
            raise UnboundName(name)
        return env.names[name]

    def define(self, name, value):
        self.names[name] = value

    def depth(self):
        return 0 if self.parent is None else 1 + self.parent.depth()

    def __repr__(self):
        return f"Environment({sorted(self.names)}, depth={self.depth()})"


class Function:
    def __init__(self, name, arity):
        self.name = name
        self.arity = arity

    def check_arity(self, args):
        if len(args) != self.arity:
            raise EvalError(f"{self.name} takes {self.arity} arguments, got {len(args)}")


class Closure(Function):
    def __init__(self, node, env, name="<fun>"):
        super().__init__(name, len(node.params))
        self.node = node
        self.env = env

    def __repr__(self):
        return f"<closure {self.name}({', '.join(self.node.params)})>"


class Builtin(Function):
    def __init__(self, name, arity, impl):
        super().__init__(name, arity)
        self.impl = impl


class Interpreter:
    def __init__(self, max_depth=MAX_DEPTH):
        self.globals = Environment()
        self.evaluated = Counter()
        self.calls = defaultdict(int)
        self.depth = 0
        self._max_depth = 1
        self.max_depth = max_depth
        for name, arity, impl in (("len", 1, len), ("map", 2, self.map_list), ("str", 1, str)):
            self.globals.define(name, Builtin(name, arity, impl))

    @property
    def max_depth(self):
        return self._max_depth

    @max_depth.setter
    def max_depth(self, value):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"max_depth must be a positive int, not {value!r}")
        self._max_depth = value

    def map_list(self, function, items):
        if not isinstance(items, list):
            raise EvalError("map needs a list")
        return [self.apply(function, [item]) for item in items]

    def evaluate(self, node, env):
        self.evaluated[type(node).__name__] += 1
        return getattr(self, "eval_" + type(node).__name__.lower())(node, env)

    def eval_num(self, node, env):
        return node.value

    def eval_var(self, node, env):
        return env.lookup(node.name)

    def eval_listlit(self, node, env):
        return [self.evaluate(item, env) for item in node.items]

    def eval_unary(self, node, env):
        return -self.evaluate(node.operand, env)

    def eval_binop(self, node, env):
        left = self.evaluate(node.left, env)
        right = self.evaluate(node.right, env)
        if node.op in ("/", "%") and right == 0:
            raise EvalError("division by zero")
        return OPERATORS[node.op](left, right)

    def eval_if(self, node, env):
        if self.evaluate(node.test, env):
            return self.evaluate(node.then, env)
        return self.evaluate(node.orelse, env)

    def eval_lambda(self, node, env):
        return Closure(node, env)

    def eval_let(self, node, env):
        value = self.evaluate(node.value, env)
        if isinstance(value, Closure) and value.name == "<fun>":
            value.name = node.name
        env.define(node.name, value)
        return value

    def eval_call(self, node, env):
        function = self.evaluate(node.func, env)
        args = [self.evaluate(arg, env) for arg in node.args]
        return self.apply(function, args)

    def apply(self, function, args):
        if not isinstance(function, Function):
            raise EvalError(f"{function!r} is not a function")
        function.check_arity(args)
        self.calls[function.name] += 1
        if isinstance(function, Builtin):
            return function.impl(*args)
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                raise EvalError(f"recursion deeper than {self.max_depth}")
            frame = Environment(zip(function.node.params, args), parent=function.env)
            return self.evaluate(function.node.body, frame)
        finally:
            self.depth -= 1


def show(value):
    if isinstance(value, (int, str, list)):
        return json.dumps(value)
    return repr(value)


def run_program(lines):
    interpreter = Interpreter()
    results = []
    errors = Counter()
    for number, line in enumerate(lines, start=1):
        try:
            node = Parser(significant(tokenize(line))).statement()
            value = interpreter.evaluate(node, interpreter.globals)
        except LangError as exc:
            errors[type(exc).__name__] += 1
            print(f"line {number}: {exc}")
            results.append(None)
            continue
        shown = show(value)
        print(f"line {number}: {shown}")
        results.append(shown)
    return {
        "results": results,
        "errors": dict(errors),
        "calls": dict(sorted(interpreter.calls.items())),
        "nodes": interpreter.evaluated.most_common(3),
        "globals": repr(interpreter.globals),
    }
