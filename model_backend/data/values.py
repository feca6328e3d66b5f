"""Random literal values for program inputs and code constants, by a small type vocabulary.

Types are strings: "int", "str", "bool", "list[int]", "list[str]", "dict[str, int]", "set[int]",
"tuple[int, ...]" (the generator's vocabulary), plus "float", "list[float]", "list[list[int]]",
"list[list[str]]" and "tuple[int, int]" used for real code's annotations.
Everything is drawn from a `random.Random`, so a seed fixes every value. Strings come from a small
per-program alphabet so that membership tests, `count`, `find` and `replace` hit often.
Sets hold ints only: a set of strings prints in hash order, which a model cannot predict.
"""

from __future__ import annotations

import random
import string

INT = "int"
STR = "str"
BOOL = "bool"
FLOAT = "float"
LINT = "list[int]"
LSTR = "list[str]"
LFLOAT = "list[float]"
LLINT = "list[list[int]]"
LLSTR = "list[list[str]]"
DICT = "dict[str, int]"
SET = "set[int]"
TUP = "tuple[int, ...]"
PAIR = "tuple[int, int]"

#: The types the function generator reasons about.
GEN_TYPES = (INT, STR, BOOL, LINT, LSTR, DICT, SET, TUP)
#: Element type of each iterable type (iterating a dict gives its keys).
ELEM = {STR: STR, LINT: INT, LSTR: STR, DICT: STR, SET: INT, TUP: INT, LFLOAT: FLOAT, LLINT: LINT, LLSTR: LSTR}
SIZED = (STR, LINT, LSTR, DICT, SET, TUP)


def make_alphabet(rng: random.Random) -> list[str]:
    """A small character set for one program: a few lowercase letters, sometimes capitals, digits,
    a space or a punctuation mark."""
    letters = rng.sample(string.ascii_lowercase, rng.randint(3, 6))
    chars = list(letters)
    if rng.random() < 0.3:
        chars += [c.upper() for c in rng.sample(letters, 2)]
    if rng.random() < 0.25:
        chars += rng.sample("0123456789", rng.randint(1, 3))
    if rng.random() < 0.2:
        chars.append(" ")
    if rng.random() < 0.12:
        chars.append(rng.choice("-_.,!:#@+*/"))
    return chars


class Values:
    """Draws values of a type. `small=True` gives the shorter values used as constants in code."""

    def __init__(self, rng: random.Random, alphabet: list[str] | None = None) -> None:
        self.rng = rng
        self.alphabet = alphabet if alphabet is not None else make_alphabet(rng)

    # ---- scalars -------------------------------------------------------------------------------
    def char(self) -> str:
        return self.rng.choice(self.alphabet)

    def text(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi)
        return "".join(self.rng.choice(self.alphabet) for _ in range(n))

    def word(self) -> str:
        """A short string without spaces (dict keys, list items)."""
        chars = [c for c in self.alphabet if c != " "] or ["a"]
        return "".join(self.rng.choice(chars) for _ in range(self.rng.randint(1, 4)))

    def integer(self, small: bool = False) -> int:
        r = self.rng.random()
        if small:
            return self.rng.randint(0, 5) if r < 0.8 else self.rng.randint(-3, 10)
        if r < 0.65:
            return self.rng.randint(0, 9)
        if r < 0.85:
            return self.rng.randint(-6, -1)
        return self.rng.randint(10, 30)

    def small_nat(self, hi: int = 7) -> int:
        return self.rng.randint(0, hi)

    # ---- any type --------------------------------------------------------------------------------
    def value(self, t: str, small: bool = False) -> object:
        rng = self.rng
        if t == INT:
            return self.integer(small)
        if t == FLOAT:
            return round(rng.uniform(-5, 10), rng.choice([1, 1, 2]))
        if t == BOOL:
            return rng.random() < 0.5
        if t == STR:
            if small:
                return self.text(1, 2) if rng.random() < 0.9 else ""
            if " " in self.alphabet and rng.random() < 0.4:
                return " ".join(self.word() for _ in range(rng.randint(1, 3)))
            return self.text(0 if rng.random() < 0.05 else 1, 8)
        if t in (LINT, LSTR, LFLOAT, LLINT, LLSTR):
            elem = ELEM[t]
            n = rng.randint(0, 3) if small else (rng.randint(0, 1) if rng.random() < 0.08 else rng.randint(2, 6))
            if elem == STR:
                return [self.word() for _ in range(n)]
            if elem in (LINT, LSTR):
                return [self.value(elem, small=True) for _ in range(max(1, n // 2 + 1))]
            return [self.value(elem, small=small) for _ in range(n)]
        if t == DICT:
            n = rng.randint(0, 2) if small else rng.randint(1, 4)
            keys: list[str] = []
            for _ in range(n):
                k = self.word()
                if k not in keys:
                    keys.append(k)
            return {k: self.integer(small=True) for k in keys}
        if t == SET:
            return {self.integer(small=True) for _ in range(rng.randint(1, 3) if small else rng.randint(1, 5))}
        if t == TUP:
            return tuple(self.integer(small) for _ in range(rng.randint(1, 3) if small else rng.randint(2, 4)))
        if t == PAIR:
            return (self.integer(), self.integer())
        raise ValueError(f"no values for type {t!r}")

    def literal(self, t: str, small: bool = True) -> str:
        """Source text of a random value (a Python literal; `set()` for the empty set)."""
        return literal_text(self.value(t, small=small))


def literal_text(value: object) -> str:
    """repr() for the literal types; the empty set has no literal and is written `set()`."""
    if isinstance(value, set) and not value:
        return "set()"
    if isinstance(value, set):
        return "{" + ", ".join(repr(v) for v in sorted(value)) + "}"
    return repr(value)
