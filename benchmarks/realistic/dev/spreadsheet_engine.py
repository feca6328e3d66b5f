"""A spreadsheet engine: cells from JSON, formula parsing, dependency-ordered recalculation and cycle detection."""
# entry: recalculate('{"A1": "10", "A2": "32", "A3": "=A1+A2*2", "B1": "=SUM(A1:A3)", "B2": "=B1/A1", "C1": "=C2+1", "C2": "=C1", "C3": "=AVG(A1:A2)-B9", "D1": "hello"}', {"A1": "12"})
# kind: parser, interpreter

import json
import re
from collections import OrderedDict

CELL_RE = re.compile(r"^([A-Z])([1-9][0-9]?)$")
TOKEN_RE = re.compile(r"\s*(?:([A-Z][0-9]+:[A-Z][0-9]+)|([A-Z][0-9]+)|(\d+(?:\.\d+)?)|([A-Z]+)\(|(.))")
FUNCTIONS = {"SUM": sum, "AVG": lambda xs: sum(xs) / len(xs), "MAX": max, "MIN": min}
END = ("end", None)


class SheetError(Exception):
    pass


class CycleError(SheetError):
    def __init__(self, path):
        super().__init__("cycle: " + " -> ".join(path))
        self.path = path


class FormulaError(SheetError):
    pass


def cell_range(text):
    start, end = text.split(":")
    (col1, row1), (col2, row2) = CELL_RE.match(start).groups(), CELL_RE.match(end).groups()
    cells = []
    for col in range(ord(col1), ord(col2) + 1):
        for row in range(int(row1), int(row2) + 1):
            cells.append(f"{chr(col)}{row}")
    return cells


def tokenize(formula):
    tokens = []
    for span, ref, number, function, symbol in TOKEN_RE.findall(formula):
        if span:
            tokens.append(("range", span))
        elif ref:
            tokens.append(("ref", ref))
        elif number:
            tokens.append(("num", float(number)))
        elif function:
            tokens.append(("func", function))
        elif symbol.strip():
            tokens.append(("op", symbol))
    return tokens


class FormulaParser:
    """expr := term (('+'|'-') term)*; term := factor (('*'|'/') factor)*; factor := num | ref | func | '(' expr ')'"""

    def __init__(self, formula):
        self.stream = iter(tokenize(formula))
        self.current = next(self.stream, END)

    def take(self):
        """The current token; the next one (END past the last) becomes current."""
        token, self.current = self.current, next(self.stream, END)
        return token

    def parse(self):
        tree = self.expr()
        if self.current != END:
            raise FormulaError(f"unexpected {self.current[1]!r}")
        return tree

    def expr(self):
        node = self.term()
        while self.current in (("op", "+"), ("op", "-")):
            node = (self.take()[1], node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self.current in (("op", "*"), ("op", "/")):
            node = (self.take()[1], node, self.factor())
        return node

    def factor(self):
        kind, value = self.take()
        if kind in ("num", "ref"):
            return (kind, value)
        if kind == "func":
            if value not in FUNCTIONS:
                raise FormulaError(f"unknown function {value}")
            kind2, span = self.take()
            if kind2 != "range" or self.take() != ("op", ")"):
                raise FormulaError(f"{value} needs a range")
            return ("func", value, cell_range(span))
        if (kind, value) == ("op", "("):
            node = self.expr()
            if self.take() != ("op", ")"):
                raise FormulaError("missing )")
            return node
        raise FormulaError(f"unexpected {value!r}")


def references(tree):
    kind = tree[0]
    if kind == "ref":
        return [tree[1]]
    if kind == "func":
        return list(tree[2])
    if kind == "num":
        return []
    return references(tree[1]) + references(tree[2])


class Sheet:
    def __init__(self, raw):
        self.raw = dict(raw)
        self.trees = {}
        self.values = OrderedDict()
        self.errors = {}
        for name, text in self.raw.items():
            self.compile(name, text)

    def compile(self, name, text):
        if text.startswith("="):
            self.trees[name] = FormulaParser(text[1:]).parse()
        else:
            self.trees[name] = ("num", float(text)) if re.fullmatch(r"-?\d+(\.\d+)?", text) else ("text", text)

    def order(self):
        """Cells in dependency order (depth-first), raising CycleError on a cycle."""
        done, visiting, ordered = set(), [], []

        def visit(name):
            if name in done:
                return
            if name in visiting:
                raise CycleError(visiting[visiting.index(name):] + [name])
            visiting.append(name)
            tree = self.trees.get(name, ("num", 0.0))
            if tree[0] != "text":
                for ref in references(tree):
                    visit(ref)
            visiting.pop()
            done.add(name)
            ordered.append(name)

        for name in sorted(self.trees):
            try:
                visit(name)
            except CycleError as exc:
                for cell in exc.path:
                    self.errors[cell] = "#CYCLE"
                    done.add(cell)
                visiting.clear()
        return ordered

    def value_of(self, name):
        if name in self.errors:
            raise SheetError(f"{name} is {self.errors[name]}")
        return self.values.get(name, 0.0)

    def evaluate(self, tree):
        kind = tree[0]
        if kind == "num":
            return tree[1]
        if kind == "ref":
            return self.value_of(tree[1])
        if kind == "func":
            return FUNCTIONS[tree[1]]([self.value_of(cell) for cell in tree[2]])
        left, right = self.evaluate(tree[1]), self.evaluate(tree[2])
        if kind == "+":
            return left + right
        if kind == "-":
            return left - right
        if kind == "*":
            return left * right
        if right == 0:
            raise SheetError("division by zero")
        return left / right

    def recalc(self):
        evaluations = 0

        def compute(name):
            nonlocal evaluations
            tree = self.trees.get(name)
            if tree is None or tree[0] == "text":
                return
            evaluations += 1
            try:
                self.values[name] = round(self.evaluate(tree), 4)
            except SheetError as exc:
                self.errors[name] = "#ERR"
                print(f"{name}: {exc}")

        for name in self.order():
            if name not in self.errors:
                compute(name)
        return evaluations

    def display(self):
        shown = {}
        for name in sorted(self.raw):
            if name in self.errors:
                shown[name] = self.errors[name]
            elif name in self.values:
                shown[name] = self.values[name]
            else:
                shown[name] = self.raw[name]
        return shown


def recalculate(sheet_json, edits):
    raw = json.loads(sheet_json)
    raw.update(edits)
    sheet = Sheet(raw)
    count = sheet.recalc()
    shown = sheet.display()
    print(json.dumps(shown, sort_keys=True))
    return {"evaluated": count, "order": list(sheet.values), "cells": shown}
