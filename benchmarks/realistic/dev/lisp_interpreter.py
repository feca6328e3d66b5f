"""A small Lisp: reader, environments with closures, special forms, a standard library and a REPL loop."""
# entry: repl(["(define (fact n) (if (<= n 1) 1 (* n (fact (- n 1)))))", "(fact 2)", "(define counter (let ((n 0)) (lambda () (set! n (+ n 1)) n)))", "(counter)", "(cond (#f 'no) (else 'yes))", "(car (quote ()))", "(undefined-fn 1)", "(+ 1"])
# kind: interpreter, parser

import math
import operator
import re
from functools import reduce


class LispError(Exception):
    pass


class ReadError(LispError):
    pass


class Symbol(str):
    def __repr__(self):
        return f"Symbol({str(self)})"


NIL = ()
NUMBER = re.compile(r"-?\d+(\.\d*)?")
QUOTE, IF, DEFINE, LAMBDA, SET, LET, COND, ELSE, BEGIN = map(
    Symbol, ["quote", "if", "define", "lambda", "set!", "let", "cond", "else", "begin"]
)


def tokenize(text):
    return text.replace("(", " ( ").replace(")", " ) ").replace("'", " ' ").split()


def atom(token):
    if NUMBER.fullmatch(token):
        return float(token) if "." in token else int(token)
    if token == "#t":
        return True
    if token == "#f":
        return False
    return Symbol(token)


def read_from(tokens, pos):
    if pos >= len(tokens):
        raise ReadError("unexpected end of input")
    token = tokens[pos]
    if token == "(":
        items = []
        pos += 1
        while pos < len(tokens) and tokens[pos] != ")":
            item, pos = read_from(tokens, pos)
            items.append(item)
        if pos >= len(tokens):
            raise ReadError("missing )")
        return items, pos + 1
    if token == ")":
        raise ReadError("unexpected )")
    if token == "'":
        quoted, pos = read_from(tokens, pos + 1)
        return [QUOTE, quoted], pos
    return atom(token), pos + 1


def parse(text):
    tokens = tokenize(text)
    expression, pos = read_from(tokens, 0)
    if pos != len(tokens):
        raise ReadError(f"trailing tokens: {tokens[pos:]}")
    return expression


class Env:
    def __init__(self, names=(), values=(), outer=None):
        self.vars = dict(zip(names, values, strict=True))
        self.outer = outer

    def find(self, name):
        env = self
        while env is not None:
            if name in env.vars:
                return env
            env = env.outer
        raise LispError(f"unbound symbol: {name}")

    def depth(self):
        return 0 if self.outer is None else 1 + self.outer.depth()


class Procedure:
    def __init__(self, params, body, env, name="lambda"):
        self.params = params
        self.body = body
        self.env = env
        self.name = name

    def __call__(self, *args):
        if len(args) != len(self.params):
            raise LispError(f"{self.name} expects {len(self.params)} arguments, got {len(args)}")
        local = Env(self.params, args, self.env)
        result = None
        for expression in self.body:
            result = evaluate(expression, local)
        return result

    def __repr__(self):
        return f"<procedure {self.name}/{len(self.params)}>"


def car(items):
    if not items:
        raise LispError("car of empty list")
    return items[0]


def standard_env():
    env = Env()
    env.vars.update(
        {
            "+": lambda *xs: sum(xs),
            "-": lambda a, *xs: a - sum(xs) if xs else -a,
            "*": lambda *xs: reduce(operator.mul, xs, 1),
            "/": operator.truediv,
            "<": operator.lt,
            ">": operator.gt,
            "<=": operator.le,
            "=": operator.eq,
            "sqrt": math.sqrt,
            "list": lambda *xs: list(xs),
            "car": car,
            "cdr": lambda xs: xs[1:],
            "cons": lambda x, xs: [x, *xs],
            "null?": lambda xs: xs == [] or xs == NIL,
            "map": lambda f, xs: [f(x) for x in xs],
            "filter": lambda f, xs: [x for x in xs if f(x)],
        }
    )
    return env


def eval_define(expression, env):
    target = expression[1]
    if isinstance(target, list):
        name, params = target[0], target[1:]
        env.vars[name] = Procedure(params, expression[2:], env, name)
    else:
        value = evaluate(expression[2], env)
        if isinstance(value, Procedure) and value.name == "lambda":
            value.name = target
        env.vars[target] = value
    return None


def eval_let(expression, env):
    bindings, body = expression[1], expression[2:]
    names = [name for name, _ in bindings]
    values = [evaluate(value, env) for _, value in bindings]
    local = Env(names, values, env)
    result = None
    for item in body:
        result = evaluate(item, local)
    return result


def eval_cond(expression, env):
    for test, *body in expression[1:]:
        if test == ELSE or evaluate(test, env):
            result = None
            for item in body:
                result = evaluate(item, env)
            return result
    return None


def evaluate(x, env):
    if isinstance(x, Symbol):
        return env.find(x).vars[x]
    if not isinstance(x, list):
        return x
    if not x:
        return NIL
    head = x[0]
    if head == QUOTE:
        return x[1]
    if head == IF:
        _, test, consequence, alternative = x
        return evaluate(consequence if evaluate(test, env) else alternative, env)
    if head == DEFINE:
        return eval_define(x, env)
    if head == SET:
        env.find(x[1]).vars[x[1]] = evaluate(x[2], env)
        return None
    if head == LAMBDA:
        return Procedure(x[1], x[2:], env)
    if head == LET:
        return eval_let(x, env)
    if head == COND:
        return eval_cond(x, env)
    if head == BEGIN:
        result = None
        for item in x[1:]:
            result = evaluate(item, env)
        return result
    procedure = evaluate(head, env)
    args = [evaluate(arg, env) for arg in x[1:]]
    if not callable(procedure):
        raise LispError(f"not a procedure: {procedure!r}")
    return procedure(*args)


def to_text(value):
    if value is True:
        return "#t"
    if value is False:
        return "#f"
    if isinstance(value, list | tuple):
        return "(" + " ".join(to_text(v) for v in value) + ")"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def describe(env):
    """One line per user binding: name, kind and closure depth."""
    lines = []
    builtins = standard_env().vars
    for name, value in sorted(env.vars.items()):
        if name in builtins:
            continue
        if isinstance(value, Procedure):
            lines.append(f"{name}: procedure of {len(value.params)}, closure depth {value.env.depth()}")
        else:
            lines.append(f"{name}: {to_text(value)}")
    return lines


def repl(lines):
    env = standard_env()
    transcript = []
    errors = 0
    for line in lines:
        try:
            value = evaluate(parse(line), env)
        except ReadError as exc:
            errors += 1
            output = f"read error: {exc}"
        except LispError as exc:
            errors += 1
            output = f"error: {exc}"
        else:
            output = "" if value is None else to_text(value)
        finally:
            transcript.append(line)
        if output:
            print(f"> {line}\n{output}")
    return {"defined": describe(env), "errors": errors, "lines": len(transcript)}
