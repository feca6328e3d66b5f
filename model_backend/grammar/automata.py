"""The token automata of constrained decoding: tiny byte automata, immutable so that checking a
candidate token is a cheap copy. `Choice` (one of fixed byte strings), `JsonString` (a JSON string
holding a repr-shaped value), `Value`, `Spliced` (a repr fixed but for gaps), `Locals` (a frame's
variables as JSON) and `Stack` (a frame's stack, as the program's call graph allows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Self

from model_backend import trace_format as fmt
from model_backend.grammar.shown import IMMUTABLE_REPR
from model_backend.state import State

if TYPE_CHECKING:  # annotations only: facts.py builds on the rules, which build on these automata
    from model_backend.grammar.facts import ProgramFacts

MAX_STRING = 240  # bytes in one JSON string (reprs are cut at 200 characters by the tracer)
MAX_TEXT = 8192  # bytes in a frame's printed text or exit reason, which no repr cut bounds (a frame's token
# limit, MAX_FRAME_TOKENS, ends a longer one first)
MAX_STACK = 32


class _Bytewise:
    """An automaton that reads one byte at a time: `_step` gives the automaton after one byte (None where
    the byte is refused), `feed` after several."""

    def _step(self, byte: int) -> Self | None:
        raise NotImplementedError

    def feed(self, data: bytes) -> Self | None:
        state: Self | None = self
        for byte in data:
            if state is None:
                return None
            state = state._step(byte)
        return state


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of byte strings (a line number, a function name, `null`)."""

    options: frozenset[bytes]
    prefix: bytes = b""

    def feed(self, data: bytes) -> Choice | None:
        prefix = self.prefix + data
        return replace(self, prefix=prefix) if any(o.startswith(prefix) for o in self.options) else None

    @property
    def complete(self) -> bool:
        return self.prefix in self.options


_CLOSER_OF = {0x29: 0x28, 0x5D: 0x5B, 0x7D: 0x7B}  # ) ] } -> ( [ {
_JSON_ESCAPED = {0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F}  # \" \\ \/ stand for these characters
CUT_REPR = 200  # the tracer cuts a longer repr there and adds "...", so its shape is no longer whole
# One character repeated more than this in a row ends a value's repr: no value in our datasets has a run
# longer than 42 (`ndb grammar check`), while a model that starts repeating one character (a
# degenerate loop) would otherwise write it up to MAX_STRING times, in every variable of the frame.
MAX_RUN = 64


def _repr_shape_step(brackets: bytes, quote: int, escaped: bool, char: int) -> tuple[bytes, int, bool] | None:
    """One character of a Python repr: brackets must close in order, outside string literals."""
    if quote:
        if escaped:
            return brackets, quote, False
        if char == 0x5C:
            return brackets, quote, True
        return brackets, (0 if char == quote else quote), False
    if char in (0x27, 0x22):
        return brackets, char, False
    if char in (0x28, 0x5B, 0x7B):
        return brackets + bytes([char]), 0, False
    opener = _CLOSER_OF.get(char)
    if opener is not None:
        if not brackets or brackets[-1] != opener:
            return None
        return brackets[:-1], 0, False
    return brackets, 0, False


# A dict key or set element whose repr is its value: two equal texts are one value, which a dict or a
# set cannot hold twice (not so for `<Foo object>`, whose repr hides which object it is).
_PLAIN_KEY = re.compile(IMMUTABLE_REPR.pattern.encode())

# One entry per open bracket of a repr, innermost last: None, or for a `{`, (kind, keys seen, the text of
# the key or element being written (None once it holds a bracket), whether a dict's value is being written).
Braces = tuple[tuple[int, frozenset[bytes], bytes | None, bool] | None, ...]
_UNKNOWN, _DICT, _SET = 0, 1, 2


def _with_key(seen: frozenset[bytes], text: bytes | None) -> frozenset[bytes] | None:
    """`seen` and one more key or element; None if it is a plain one already there."""
    if text is None or not _PLAIN_KEY.fullmatch(text):
        return seen
    return None if text in seen else seen | {text}


def _unique_keys_step(braces: Braces, quote: int, char: int) -> Braces | None:
    """One character of a repr (`quote`: the string literal open before it, 0 outside one) for the rule
    that a dict's keys and a set's elements are distinct: None where a plain key comes a second time.
    The repr's brackets are checked by _repr_shape_step; this follows only what sits in `{...}`."""
    top = braces[-1] if braces else None
    if quote:  # inside a string literal: part of the key's text
        if top is not None and top[2] is not None and not top[3]:
            return (*braces[:-1], (top[0], top[1], top[2] + bytes([char]), top[3]))
        return braces
    if char in (0x28, 0x5B, 0x7B):  # a bracket opens: the key holding it is not a plain one
        if top is not None and not top[3]:
            braces = (*braces[:-1], (top[0], top[1], None, top[3]))
        return (*braces, (_UNKNOWN, frozenset(), b"", False) if char == 0x7B else None)
    if char in (0x29, 0x5D, 0x7D):
        if char == 0x7D and top is not None and not top[3] and _with_key(top[1], top[2]) is None:
            return None  # a set's last element
        return braces[:-1]
    if top is None or char == 0x20:
        return braces
    kind, seen, text, in_value = top
    if char == 0x3A and not in_value and kind != _SET:  # a dict's key ends
        keys = _with_key(seen, text)
        return None if keys is None else (*braces[:-1], (_DICT, keys, b"", True))
    if char == 0x2C:
        if in_value:  # a dict's value ends
            return (*braces[:-1], (_DICT, seen, b"", False))
        keys = _with_key(seen, text)  # a set's element ends
        return None if keys is None else (*braces[:-1], (_SET, keys, b"", False))
    if in_value or text is None:
        return braces
    return (*braces[:-1], (kind, seen, text + bytes([char]), in_value))


@dataclass(frozen=True)
class JsonString:
    """A JSON string as json.dumps(ensure_ascii=False) writes it, at most `limit` bytes inside (MAX_STRING
    for a value; MAX_TEXT for printed text, which a program writes without any cut).

    With `repr_shape`, the string holds a Python repr: its brackets close in order and its string
    literals end before the closing quote (unless it is long enough to be one the tracer cut), and no
    character repeats more than MAX_RUN times in a row. No value the tracer wrote in our datasets
    breaks this; it keeps a model from stopping half-way through a list or a string, or from looping
    on one character.
    """

    phase: int = 0  # 0 before the opening quote, 1 inside, 2 after a backslash, 3..6 in \uXXXX, 7 closed
    length: int = 0
    last: int = 0
    repr_shape: bool = False
    brackets: bytes = b""  # the repr's open brackets, innermost last
    quote: int = 0  # the quote of the repr's open string literal, 0 outside one
    escaped: bool = False  # after a backslash inside that literal
    run: int = 0  # how many times `last` repeats at the end (plain characters only)
    unique_keys: bool = False  # with repr_shape: refuse a plain dict key or set element written twice
    braces: Braces = ()  # for unique_keys (see _unique_keys_step)
    limit: int = MAX_STRING

    def feed(self, data: bytes) -> JsonString | None:
        phase, length, last, run = self.phase, self.length, self.last, self.run
        shape, brackets, quote, escaped = self.repr_shape, self.brackets, self.quote, self.escaped
        braces = self.braces
        for byte in data:
            char = -1  # the repr's character this byte completes, if any
            if phase == 0:
                if byte != 0x22:
                    return None
                phase = 1
            elif phase == 1:
                if byte == 0x22:
                    if shape and (brackets or quote) and length < CUT_REPR:
                        return None
                    phase = 7
                elif length >= self.limit:
                    return None
                elif byte == 0x5C:
                    phase, length, run = 2, length + 1, 0
                elif byte < 0x20 or (byte == 0x7C and last == 0x3C):  # control char, or "<|"
                    return None
                else:
                    run = run + 1 if byte == last else 1
                    if shape and run > MAX_RUN:
                        return None
                    length += 1
                    char = byte
            elif phase == 2:
                if byte == 0x75:  # \u
                    phase = 3
                elif byte in b'"\\/bfnrt':
                    phase = 1
                    char = _JSON_ESCAPED.get(byte, 0)
                else:
                    return None
            elif 3 <= phase <= 6:
                if byte not in b"0123456789abcdefABCDEF":
                    return None
                if phase == 6:
                    phase, char = 1, 0  # json.dumps escapes only control characters this way
                else:
                    phase += 1
            else:
                return None
            if shape and char >= 0:
                if self.unique_keys and length <= CUT_REPR:  # past it the tracer cut the repr
                    stepped_braces = _unique_keys_step(braces, quote, char)
                    if stepped_braces is None:
                        return None
                    braces = stepped_braces
                stepped = _repr_shape_step(brackets, quote, escaped, char)
                if stepped is None:
                    return None
                brackets, quote, escaped = stepped
            last = byte
        return JsonString(phase, length, last, shape, brackets, quote, escaped, run, self.unique_keys, braces, self.limit)

    @property
    def complete(self) -> bool:
        return self.phase == 7


@dataclass(frozen=True)
class Value:
    """A return value or exception: a JSON string, or `null`."""

    inner: JsonString | Choice | None = None
    unique_keys: bool = False  # see JsonString

    def feed(self, data: bytes) -> Value | None:
        if not data:
            return self
        inner = self.inner
        if inner is None:
            inner = (Choice(frozenset({b"null"})) if data[:1] == b"n"
                     else JsonString(repr_shape=True, unique_keys=self.unique_keys))
        fed = inner.feed(data)
        return Value(fed, self.unique_keys) if fed is not None else None

    @property
    def complete(self) -> bool:
        return self.inner is not None and self.inner.complete


# Where a Spliced string stands in its template: (part, bytes of a fixed part matched, the automaton of
# a free value being written, or None in a fixed part)
_Path = tuple[int, int, JsonString | None]


@dataclass(frozen=True)
class Spliced(_Bytewise):
    """A JSON string whose repr is fixed text with, in the gaps, the repr of one value each: a list or a
    dict after a step that changed one item or added one (the other items as they were). Or that repr
    as the tracer cuts a long one: its first CUT_REPR characters and `...`.

    `parts` are the fixed texts, JSON-escaped and without quotes, and None for each gap. A gap ends
    where its value's brackets and quotes are closed and the next fixed text matches; as that is not
    known in advance, every way through is followed (`paths`)."""

    parts: tuple[bytes | None, ...]
    paths: frozenset[_Path] = frozenset()
    phase: int = 0  # 0 before the opening quote, 1 inside, 2 in the cut's "...", 3 closed
    chars: int = 0  # characters of the repr so far
    escape: int = 0  # bytes left of a JSON escape (`\n`: 1 after the backslash; `\uXXXX`: 4 after the `u`)
    dots: int = 0

    @classmethod
    def of(cls, parts: tuple[str | None, ...]) -> Spliced:
        escaped = tuple(None if part is None else fmt._json(part)[1:-1].encode() for part in parts)
        return cls(escaped, cls._settled(escaped, frozenset({(0, 0, None if escaped[0] is not None else _GAP)})))

    @staticmethod
    def _settled(parts: tuple[bytes | None, ...], paths: frozenset[_Path]) -> frozenset[_Path]:
        """The paths with every move that takes no byte: past a fixed part's end, or a gap's closed value."""
        todo, seen = list(paths), set(paths)
        while todo:
            index, offset, gap = todo.pop()
            if index == len(parts):
                continue
            part = parts[index]
            ended = (gap is not None and gap.phase == 1 and gap.length > 0 and not gap.brackets and not gap.quote
                     ) if part is None else offset == len(part)
            if ended:
                following = (index + 1, 0, _GAP if index + 1 < len(parts) and parts[index + 1] is None else None)
                if following not in seen:
                    seen.add(following)
                    todo.append(following)
        return frozenset(seen)

    def _complete_path(self) -> bool:
        return any(index == len(self.parts) for index, _, _ in self.paths)

    def _step(self, byte: int) -> Spliced | None:
        if self.phase == 0:
            return replace(self, phase=1) if byte == 0x22 else None
        if self.phase == 2:  # the tracer's cut: `...` and the closing quote
            if self.dots < 3:
                return replace(self, dots=self.dots + 1) if byte == 0x2E else None
            return replace(self, phase=3) if byte == 0x22 else None
        if self.phase != 1:
            return None
        if self.escape == 0 and byte == 0x22:  # the closing quote: the repr is whole
            return replace(self, phase=3) if self._complete_path() else None
        starts_char = self.escape == 0 and not 0x80 <= byte < 0xC0
        if starts_char and self.chars == CUT_REPR:  # a longer repr: the tracer cut it here
            alive = any(index < len(self.parts) for index, _, _ in self.paths)
            return replace(self, phase=2, dots=1) if byte == 0x2E and alive else None
        moved: set[_Path] = set()
        for index, offset, gap in self.paths:
            if index == len(self.parts):
                continue
            part = self.parts[index]
            if part is None:
                assert gap is not None
                if byte == 0x2C and gap.phase == 1 and not gap.brackets and not gap.quote:
                    continue  # one value's repr has no comma outside its brackets and quotes
                fed = gap.feed(bytes([byte]))
                if fed is not None and fed.phase != 7:
                    moved.add((index, 0, fed))
            elif offset < len(part) and part[offset] == byte:
                moved.add((index, offset + 1, None))
        if not moved:
            return None
        if self.escape:
            escape = 4 if self.escape == 1 and byte == 0x75 else self.escape - 1
        else:
            escape = 1 if byte == 0x5C else 0
        return replace(self, paths=self._settled(self.parts, frozenset(moved)), chars=self.chars + starts_char,
                       escape=escape)

    @property
    def complete(self) -> bool:
        return self.phase == 3


_GAP = JsonString(phase=1, repr_shape=True)  # a gap's value, inside the string already


@dataclass(frozen=True)
class Locals:
    """`{"name": "repr", ...}` with our separators; keys from the program's names, each at most once;
    the diff marker `"..": ".."` only where a diff is allowed, and only first."""

    keys: frozenset[bytes]
    diff_allowed: bool
    diff_keys: frozenset[bytes] | None = None  # the only keys a diff may name (None: any of `keys`)
    # (key, its possible values as JSON) pairs: names the step bound to known values; each key must be
    # written, except in a diff when it had such a value already (it is in `unchanged`)
    forced: tuple[tuple[bytes, frozenset[bytes]], ...] = ()
    unchanged: frozenset[bytes] = frozenset()
    # (key, the shape its value must have) pairs: a list or a dict the step changed in one item at most;
    # unlike a forced key, it may be left out
    shaped: tuple[tuple[bytes, Spliced], ...] = ()
    required: frozenset[bytes] = frozenset()  # keys that must be written (a shaped value its old one cannot fit)
    unique_keys: bool = False  # see JsonString
    phase: int = 0  # 0 '{', 1 first key or '}', 2 key, 3 ':', 4 ' ', 5 value, 6 ',' or '}', 7 ' ', 8 '"', 9 done
    used: frozenset[bytes] = frozenset()
    key: bytes = b""
    value: JsonString | Choice | Spliced | None = None
    count: int = 0

    def _key_options(self) -> list[bytes]:
        options = [k for k in self.keys if k not in self.used]
        if self.diff_keys is not None and b".." in self.used:
            options = [k for k in options if k in self.diff_keys]
        if self.diff_allowed and self.count == 0:
            options.append(b"..")
        return options

    def _may_close(self) -> bool:
        """Whether `}` may come: the forced keys written (in a diff, if the value changed)."""
        return self.required <= self.used and all(
            key in self.used or (key in self.unchanged and b".." in self.used) for key, _ in self.forced)

    def feed(self, data: bytes) -> Locals | None:
        s: Locals | None = self
        for i, byte in enumerate(data):
            if s is None:
                return None
            if s.phase == 5:  # inside the value: hand the rest of the chunk to the string automaton
                return s._feed_value(data[i:])
            s = s._step(byte)
        return s

    def _feed_value(self, data: bytes) -> Locals | None:
        assert self.value is not None
        for i in range(len(data)):
            fed = self.value.feed(data[i : i + 1])
            if fed is None:
                return None
            if fed.complete:
                rest = replace(self, phase=6, value=None, count=self.count + 1)
                return rest.feed(data[i + 1 :]) if i + 1 < len(data) else rest
            self = replace(self, value=fed)
        return self

    def _step(self, byte: int) -> Locals | None:
        p = self.phase
        if p == 0:
            return replace(self, phase=1) if byte == 0x7B else None
        if p in (1, 8):
            if byte == 0x22 and self._key_options():
                return replace(self, phase=2, key=b"")
            if p == 1 and byte == 0x7D and self._may_close():
                return replace(self, phase=9)
            return None
        if p == 2:
            if byte == 0x22:
                if self.key not in self._key_options():
                    return None
                forced = dict(self.forced).get(self.key)
                shaped = dict(self.shaped).get(self.key)
                value: JsonString | Choice | Spliced = (
                    Choice(frozenset({b'".."'})) if self.key == b".." else
                    Choice(forced) if forced is not None else
                    shaped if shaped is not None
                    else JsonString(repr_shape=True, unique_keys=self.unique_keys)
                )
                return replace(self, phase=3, used=self.used | {self.key}, value=value)
            key = self.key + bytes([byte])
            return replace(self, key=key) if any(k.startswith(key) for k in self._key_options()) else None
        if p == 3:
            return replace(self, phase=4) if byte == 0x3A else None
        if p == 4:
            return replace(self, phase=5) if byte == 0x20 else None
        if p == 6:
            if byte == 0x7D:
                return replace(self, phase=9) if self._may_close() else None
            if byte == 0x2C and self._key_options():
                return replace(self, phase=7)
            return None
        if p == 7:
            return replace(self, phase=8) if byte == 0x20 else None
        return None

    @property
    def complete(self) -> bool:
        return self.phase == 9


@dataclass(frozen=True)
class Stack(_Bytewise):
    """`[["f", 3], ["g", 7]]`: known function names, program lines, the last entry on the frame's line,
    and (with `facts`) every entry on a line of its own function, every caller on a line that can call
    the function above it, and no entry from which the stack could not reach the frame's line."""

    functions: frozenset[bytes]
    lines: frozenset[bytes]
    final_line: bytes
    facts: ProgramFacts | None = None
    # function -> the fewest entries that must follow an entry of it (0: it can end the stack);
    # functions that cannot lead to the frame's line are absent
    to_end: dict[str, int] | None = None
    # (caller's function, caller's line) -> the fewest entries after it that end the stack
    after_line: dict[tuple[str, int], int] | None = None
    last_function: bytes = b""
    # One traced event from the previous state (Stack.after_event): the entries it keeps as they were,
    # the function of the entry above them, and how many entries the stack has
    kept: tuple[tuple[bytes, bytes], ...] = ()
    kept_top: bytes | None = None
    size: int | None = None
    phase: int = 0  # 0 '[', 1 '[', 2 name, 3 ',', 4 ' ', 5 line, 6 ']' closing the item, 7 ',' or ']', 8 ' ', 9 done
    part: Choice | JsonString | None = None
    last_line: bytes = b""
    count: int = 0

    @classmethod
    def for_frame(cls, facts: ProgramFacts, line: int | None) -> Stack:
        """The stack of a frame on `line` of the program `facts` describe."""
        to_end = _entries_to_end(facts, line) if line is not None else None
        after_line = None
        if to_end is not None:
            after_line = {at: 1 + min(to_end[f] for f in callees if f in to_end)
                          for at, callees in facts.callees_at.items() if not callees.isdisjoint(to_end)}
        return cls(functions=frozenset(f.encode() for f in facts.functions),
                   lines=frozenset(str(n).encode() for n in facts.lines), final_line=str(line).encode(), facts=facts,
                   to_end=to_end, after_line=after_line)

    def after_event(self, prev: State, event: str) -> Stack:
        """This stack, for an `event` traced right after `prev` (step_into; stack_after_event)."""
        kept, top, count = stack_after_event(prev, event)
        entries = [(f.function.encode(), str(f.line).encode()) for f in prev.stack[:kept]]
        return replace(self, kept=tuple(entries), kept_top=top.encode() if top is not None else None, size=count)

    def _step(self, byte: int) -> Stack | None:
        p = self.phase
        if p == 0:
            return replace(self, phase=1) if byte == 0x5B else None
        if p == 1:
            if byte == 0x5B and self.count < MAX_STACK:
                caller = int(self.last_line) if self.count else None
                names = frozenset(b'"' + f + b'"' for f in self.functions if self._may_follow(caller, f, self.count))
                return replace(self, phase=2, part=Choice(names)) if names else None
            return None
        if p == 2:
            assert isinstance(self.part, Choice)
            fed = self.part.feed(bytes([byte]))
            if fed is None:
                return None
            if fed.complete:
                return replace(self, phase=3, part=fed, last_function=fed.prefix[1:-1])
            return replace(self, part=fed)
        if p == 3:
            return replace(self, phase=4) if byte == 0x2C else None
        if p == 4:
            # The last item the bound allows must end on the frame's own line, or ']' could never come.
            lines = frozenset({self.final_line}) if self.count + 1 >= self.limit else self.lines
            if self.count < len(self.kept):
                lines = lines & {self.kept[self.count][1]}
            if self.facts is not None:  # on a line of its own function, from which the stack can still end
                lines = frozenset(n for n in lines if self._fits(n) and self._may_end_from(n))
            return replace(self, phase=5, part=Choice(lines)) if byte == 0x20 else None
        if p == 5:
            assert isinstance(self.part, Choice)
            if byte == 0x5D and self.part.complete:
                return replace(self, phase=7, last_line=self.part.prefix, count=self.count + 1)
            fed = self.part.feed(bytes([byte]))
            return replace(self, part=fed) if fed is not None else None
        if p == 7:
            if (byte == 0x5D and self.last_line == self.final_line and self._last_fits()
                    and self.size in (None, self.count)):
                return replace(self, phase=9)
            if byte == 0x2C and self.count < self.limit and self._may_continue(int(self.last_line), self.count):
                return replace(self, phase=8)
            return None
        if p == 8:
            return replace(self, phase=1) if byte == 0x20 else None
        return None

    def _may_follow(self, caller: int | None, function: bytes, index: int) -> bool:
        """Whether entry `index` (0 = the bottom) can be `function`, the entry below (of `last_function`)
        being on `caller`."""
        if index < len(self.kept) and function != self.kept[index][0]:
            return False
        if index == len(self.kept) and self.kept_top is not None and function != self.kept_top:
            return False
        if self.facts is None or self.to_end is None:
            return True
        name = function.decode("utf-8", "replace")
        needed = self.to_end.get(name)
        if needed is None or index + 1 + needed > self.limit:
            return False
        return caller is None or self.facts.may_call(self.last_function.decode("utf-8", "replace"), caller, name)

    def _may_continue(self, caller: int, count: int) -> bool:
        """Whether, after `count` entries the last of which (of `last_function`) is on `caller`, another
        entry can follow."""
        if self.after_line is None:
            return True
        needed = self.after_line.get((self.last_function.decode("utf-8", "replace"), caller))
        return needed is not None and count + needed <= self.limit

    def _may_end_from(self, line: bytes) -> bool:
        """Whether the entry being written (number `count`) can be on `line`: it ends the stack there, or
        an entry it can call follows."""
        return line == self.final_line or self._may_continue(int(line), self.count + 1)

    def _last_fits(self) -> bool:
        return self._fits(self.final_line)

    def _fits(self, line: bytes) -> bool:
        """Whether the entry just written (its function, at `line`) can be: the line lies in the function."""
        if self.facts is None:
            return True
        return self.facts.may_be_in(self.last_function.decode("utf-8", "replace"), int(line))

    @property
    def limit(self) -> int:
        """The most entries the stack may have."""
        return min(self.size, MAX_STACK) if self.size is not None else MAX_STACK

    @property
    def complete(self) -> bool:
        return self.phase == 9


def stack_after_event(prev: State, event: str) -> tuple[int, str | None, int]:
    """What the stack of the next traced event after `prev` keeps: Python's frames come and go one at a
    time, so a return event leaves its frame, and then a call event (only) adds one, made from the line
    the caller stands on. Returns how many bottom entries stay exactly as they were, the function of the
    entry above them when that entry stays but its line may move (None: the entry above them is new),
    and the number of entries. Without this a model could write any stack the call graph allows: 32
    frames of a loop that calls nothing."""
    remaining = len(prev.stack) - (1 if prev.event == "return" else 0)
    if remaining <= 0:
        return 0, None, 1
    if event == "call" and prev.event in ("line", "return"):
        return remaining, None, remaining + 1
    return remaining - 1, prev.stack[remaining - 1].function, remaining + (1 if event == "call" else 0)


def _entries_to_end(facts: ProgramFacts, final_line: int) -> dict[str, int]:
    """For each function, the fewest stack entries that must follow one of its entries before an entry
    on `final_line` can end the stack (0 when its own entry can be on that line); unreachable ones absent.
    A breadth-first search backwards over the facts' call graph."""
    needed = {f: 0 for f in facts.functions if facts.may_be_in(f, final_line)}
    frontier = list(needed)
    while frontier:
        reached = []
        for f, callees in facts.callees_of.items():
            if f not in needed and any(g in callees for g in frontier):
                needed[f] = needed[frontier[0]] + 1
                reached.append(f)
        frontier = reached
    return needed


Slot = Choice | JsonString | Value | Locals | Stack | Spliced


