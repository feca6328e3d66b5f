"""A tiny Scheme-like Lisp: tokenizer, reader, environments with lexical scope, closures and special forms."""
# entry: run_program("(define (fact n) (if (< n 2) 1 (* n (fact (- n 1))))) (fact 3) (define (make-counter) (let ((c 0)) (lambda () (set! c (+ c 1)) c))) (define tick (make-counter)) (tick) (tick) (nope 1)")
# kind: interpreter, parser
import math
import operator
import re

NUMBER_RE = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)")
MAX_DEPTH = 200


class LispError(Exception):
    pass


class ParseError(LispError):
    pass


class UnboundSymbol(LispError):
    def __init__(self, name):
        super().__init__(f"unbound symbol: {name}")
        self.name = name


class Symbol(str):
    def __repr__(self):
        return str(self)


QUOTE, IF, DEFINE, LAMBDA, BEGIN, SET, LET, COND, ELSE, AND, OR = map(
    Symbol, ["quote", "if", "define", "lambda", "begin", "set!", "let", "cond", "else", "and", "or"]
)


def strip_comments(source):
    return "\n".join(line.split(";", 1)[0] for line in source.splitlines())


def tokenize(source):
    spaced = strip_comments(source).replace("(", " ( ").replace(")", " ) ").replace("'", " ' ")
    tokens = spaced.split()
    if tokens.count("(") != tokens.count(")"):
        raise ParseError(f"{tokens.count('(')} ( but {tokens.count(')')} )")
    return tokens


def atom(token):
    if NUMBER_RE.fullmatch(token):
        return float(token) if "." in token else int(token)
    if token in ("#t", "#f"):
        return token == "#t"
    return Symbol(token)


def read(tokens, position):
    """Read one expression starting at tokens[position]; return (expression, next position)."""
    if position >= len(tokens):
        raise ParseError("unexpected end of input")
    token = tokens[position]
    if token == "'":
        quoted, position = read(tokens, position + 1)
        return [QUOTE, quoted], position
    if token == "(":
        items = []
        position += 1
        while True:
            if position >= len(tokens):
                raise ParseError("missing )")
            if tokens[position] == ")":
                return items, position + 1
            item, position = read(tokens, position)
            items.append(item)
    if token == ")":
        raise ParseError("unexpected )")
    return atom(token), position + 1


def read_all(source):
    tokens = tokenize(source)
    position = 0
    while position < len(tokens):
        expression, position = read(tokens, position)
        yield expression


class Environment:
    def __init__(self, names=(), values=(), outer=None):
        self.table = dict(zip(names, values))
        self.outer = outer

    def find(self, name):
        env = self
        while env is not None:
            if name in env.table:
                return env
            env = env.outer
        raise UnboundSymbol(name)

    def __repr__(self):
        depth = 0
        env = self.outer
        while env is not None:
            depth += 1
            env = env.outer
        return f"<env {sorted(self.table)[:4]} depth={depth}>"


class Procedure:
    def __init__(self, params, body, env, name="lambda"):
        self.params = params
        self.body = body
        self.env = env
        self.name = name

    def __call__(self, *args):
        if len(args) != len(self.params):
            raise LispError(f"{self.name} expects {len(self.params)} arguments, got {len(args)}")
        local = Environment(self.params, args, self.env)
        return eval_sequence(self.body, local, 0)

    def __repr__(self):
        return f"#<procedure {self.name}>"


def lisp_car(items):
    if not items:
        raise LispError("car of an empty list")
    return items[0]


def lisp_map(proc, items):
    return [proc(item) for item in items]


def standard_environment():
    env = Environment()
    env.table.update({
        "+": lambda *xs: sum(xs),
        "-": lambda a, *rest: a - sum(rest) if rest else -a,
        "*": lambda *xs: math.prod(xs),
        "/": operator.truediv,
        "<": operator.lt, ">": operator.gt, "=": operator.eq,
        "car": lisp_car,
        "cdr": lambda items: items[1:],
        "cons": lambda head, tail: [head] + tail,
        "list": lambda *xs: list(xs),
        "null?": lambda items: items == [],
        "map": lisp_map,
        "abs": abs,
        "length": len,
        "apply": lambda proc, args: proc(*args),
        "display": lambda value: print(to_text(value), end=" "),
    })
    return env


def eval_quote(x, env, depth):
    return x[1]


def eval_if(x, env, depth):
    _, test, then, *otherwise = x
    if evaluate(test, env, depth + 1) is not False:
        return evaluate(then, env, depth + 1)
    return evaluate(otherwise[0], env, depth + 1) if otherwise else None


def eval_define(x, env, depth):
    target = x[1]
    if isinstance(target, list):
        name, params = target[0], target[1:]
        env.table[name] = Procedure(params, x[2:], env, name)
    else:
        env.table[target] = evaluate(x[2], env, depth + 1)
    return None


def eval_set(x, env, depth):
    env.find(x[1]).table[x[1]] = evaluate(x[2], env, depth + 1)
    return None


def eval_lambda(x, env, depth):
    return Procedure(x[1], x[2:], env)


def eval_let(x, env, depth):
    names = [binding[0] for binding in x[1]]
    values = [evaluate(binding[1], env, depth + 1) for binding in x[1]]
    return Procedure(names, x[2:], env, "let")(*values)


def eval_sequence(body, env, depth):
    result = None
    for expression in body:
        result = evaluate(expression, env, depth + 1)
    return result


def eval_begin(x, env, depth):
    return eval_sequence(x[1:], env, depth)


def eval_cond(x, env, depth):
    for test, *body in x[1:]:
        if test == ELSE or evaluate(test, env, depth + 1) is not False:
            return eval_sequence(body, env, depth)
    return None


def eval_and(x, env, depth):
    result = True
    for expression in x[1:]:
        result = evaluate(expression, env, depth + 1)
        if result is False:
            return False
    return result


def eval_or(x, env, depth):
    for expression in x[1:]:
        result = evaluate(expression, env, depth + 1)
        if result is not False:
            return result
    return False


SPECIAL_FORMS = {
    QUOTE: eval_quote, IF: eval_if, DEFINE: eval_define, SET: eval_set, LAMBDA: eval_lambda,
    LET: eval_let, BEGIN: eval_begin, COND: eval_cond, AND: eval_and, OR: eval_or,
}


def evaluate(x, env, depth=0):
    if depth > MAX_DEPTH:
        raise LispError("recursion too deep")
    if isinstance(x, Symbol):
        return env.find(x).table[x]
    if not isinstance(x, list):
        return x
    if not x:
        return []
    head = x[0]
    if isinstance(head, Symbol) and head in SPECIAL_FORMS:
        return SPECIAL_FORMS[head](x, env, depth)
    proc = evaluate(head, env, depth + 1)
    args = [evaluate(arg, env, depth + 1) for arg in x[1:]]
    if not callable(proc):
        raise LispError(f"{proc!r} is not a procedure")
    return proc(*args)


def to_text(value):
    if value is True:
        return "#t"
    if value is False:
        return "#f"
    if isinstance(value, list):
        return "(" + " ".join(to_text(item) for item in value) + ")"
    return str(value)


def run_program(source):
    env = standard_environment()
    transcript = []
    for expression in read_all(source):
        try:
            value = evaluate(expression, env)
        except LispError as error:
            transcript.append(f"error: {error}")
            continue
        if value is not None:
            transcript.append(to_text(value))
    for line in transcript:
        print(f"=> {line}")
    return transcript
