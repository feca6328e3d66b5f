"""A calculator: tokenizer, recursive-descent parser to an AST, and an evaluator with variables and functions."""
# entry: calculate(["x = 3", "y = x * (2 + 4)", "max(x, y / 4) - -2", "z = 2 ^ 3 ^ 2", "sqrt(z) + y % 5", "1 / (x - 3)", "w + 1"])
# kind: parser, interpreter

import math
import re
from dataclasses import dataclass

TOKEN_RE = re.compile(r"\s*(?:(\d+\.?\d*)|([A-Za-z_]\w*)|(.))")
FUNCTIONS = {"sqrt": math.sqrt, "max": max, "min": min, "abs": abs}


class CalcError(Exception):
    pass


class ParseError(CalcError):
    pass


@dataclass
class Token:
    kind: str
    text: str


@dataclass
class Num:
    value: float


@dataclass
class Var:
    name: str


@dataclass
class BinOp:
    op: str
    left: object
    right: object


@dataclass
class Neg:
    operand: object


@dataclass
class Call:
    name: str
    args: list


@dataclass
class Assign:
    name: str
    value: object


def tokenize(text):
    tokens = []
    for number, name, symbol in TOKEN_RE.findall(text):
        if number:
            tokens.append(Token("num", number))
        elif name:
            tokens.append(Token("name", name))
        elif symbol.strip():
            tokens.append(Token("op", symbol))
    tokens.append(Token("end", ""))
    return tokens


class Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos]

    def advance(self):
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, text):
        token = self.advance()
        if token.text != text:
            raise ParseError(f"expected {text!r}, got {token.text!r}")
        return token

    def statement(self):
        if self.peek().kind == "name" and self.tokens[self.pos + 1].text == "=":
            name = self.advance().text
            self.advance()
            node = Assign(name, self.expression())
        else:
            node = self.expression()
        if self.peek().kind != "end":
            raise ParseError(f"unexpected {self.peek().text!r}")
        return node

    def expression(self):
        node = self.term()
        while self.peek().text in ("+", "-"):
            op = self.advance().text
            node = BinOp(op, node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self.peek().text in ("*", "/", "%"):
            op = self.advance().text
            node = BinOp(op, node, self.factor())
        return node

    def factor(self):
        if self.peek().text == "-":
            self.advance()
            return Neg(self.factor())
        base = self.atom()
        if self.peek().text == "^":
            self.advance()
            return BinOp("^", base, self.factor())
        return base

    def atom(self):
        token = self.advance()
        if token.kind == "num":
            return Num(float(token.text))
        if token.kind == "name":
            if self.peek().text == "(":
                return Call(token.text, self.arguments())
            return Var(token.text)
        if token.text == "(":
            node = self.expression()
            self.expect(")")
            return node
        raise ParseError(f"unexpected {token.text!r}")

    def arguments(self):
        self.expect("(")
        args = [self.expression()]
        while self.peek().text == ",":
            self.advance()
            args.append(self.expression())
        self.expect(")")
        return args


def evaluate(node, env):
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Var):
        if node.name not in env:
            raise CalcError(f"undefined variable {node.name}")
        return env[node.name]
    if isinstance(node, Neg):
        return -evaluate(node.operand, env)
    if isinstance(node, Call):
        return FUNCTIONS[node.name](*[evaluate(arg, env) for arg in node.args])
    if isinstance(node, Assign):
        env[node.name] = evaluate(node.value, env)
        return env[node.name]
    left, right = evaluate(node.left, env), evaluate(node.right, env)
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if node.op == "^":
        return left**right
    if right == 0:
        raise CalcError("division by zero")
    return left / right if node.op == "/" else left % right


def calculate(lines):
    env = {}
    results = []
    for line in lines:
        try:
            tree = Parser(tokenize(line)).statement()
            value = evaluate(tree, env)
        except CalcError as exc:
            print(f"{line}: error: {exc}")
            results.append(None)
        else:
            print(f"{line} => {value:g}")
            results.append(value)
    return {"results": results, "env": env}
