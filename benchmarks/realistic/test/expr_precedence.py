"""An arithmetic expression evaluator: a regex tokenizer, a precedence-climbing parser and a tree walker."""
# entry: evaluate_all(["2 + 3 * 4", "(1 + 2) ^ 2 ^ 2 / 9", "-x * (y - 4) % 5", "10 / (z - z)"], {"x": 3, "y": 11, "z": 2})
# kind: parser, interpreter
import re
from collections import namedtuple

TOKEN_RE = re.compile(r"\s*(?:(\d+\.?\d*)|([A-Za-z_]\w*)|(.))")
BINARY = {"+": (1, "left"), "-": (1, "left"), "*": (2, "left"), "/": (2, "left"), "%": (2, "left"), "^": (3, "right")}

Token = namedtuple("Token", "kind value")
Num = namedtuple("Num", "value")
Var = namedtuple("Var", "name")
Neg = namedtuple("Neg", "operand")
BinOp = namedtuple("BinOp", "op left right")


class ParseError(Exception):
    pass


def tokenize(text):
    tokens = []
    for number, name, op in TOKEN_RE.findall(text):
        if number:
            tokens.append(Token("num", float(number) if "." in number else int(number)))
        elif name:
            tokens.append(Token("name", name))
        elif op.strip():
            tokens.append(Token("op", op))
    tokens.append(Token("end", None))
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

    def parse(self):
        tree = self.expression(1)
        if self.peek().kind != "end":
            raise ParseError(f"unexpected {self.peek().value!r}")
        return tree

    def expression(self, min_prec):
        left = self.atom()
        while True:
            token = self.peek()
            if token.kind != "op" or token.value not in BINARY:
                break
            prec, assoc = BINARY[token.value]
            if prec < min_prec:
                break
            self.advance()
            next_min = prec + 1 if assoc == "left" else prec
            right = self.expression(next_min)
            left = BinOp(token.value, left, right)
        return left

    def atom(self):
        token = self.advance()
        if token.kind == "num":
            return Num(token.value)
        if token.kind == "name":
            return Var(token.value)
        if token.value == "-":
            return Neg(self.atom())
        if token.value == "(":
            inner = self.expression(1)
            if self.advance().value != ")":
                raise ParseError("missing )")
            return inner
        raise ParseError(f"unexpected token {token.value!r}")


def evaluate(node, env):
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Var):
        return env[node.name]
    if isinstance(node, Neg):
        return -evaluate(node.operand, env)
    left = evaluate(node.left, env)
    right = evaluate(node.right, env)
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if node.op == "/":
        return left / right
    if node.op == "%":
        return left % right
    return left ** right


def evaluate_all(sources, env):
    results = {}
    for source in sources:
        try:
            tree = Parser(tokenize(source)).parse()
            results[source] = evaluate(tree, env)
        except ZeroDivisionError:
            results[source] = "division by zero"
        except ParseError as error:
            results[source] = f"syntax error: {error}"
    return results
