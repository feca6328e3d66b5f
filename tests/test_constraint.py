"""The frame grammar accepts every frame the serializer writes, and every path through it parses."""

from __future__ import annotations

import random
import re

import pytest

from model_backend import trace_format as fmt
from model_backend.engine.constraint import FrameConstraint, ProgramFacts
from model_backend.sampler import sample_forward, sample_inverse
from model_backend.state import State
from tests.corpus import corpus, traced

TOKEN = re.compile(r"<\|[a-z0-9_]+\|>")
NAMES = [c.name for c in corpus()]


def walk(facts: ProgramFacts, prev: State | None, inverse: bool, text: str) -> None:
    constraint = FrameConstraint(facts, prev, inverse)
    assert text.startswith(fmt.FRAME)
    text, pos = text[len(fmt.FRAME):], 0
    for match in TOKEN.finditer(text):
        chunk = text[pos:match.start()]
        if constraint.slot_kind == "src":
            assert chunk == constraint.forced_text()
            constraint.push_forced()
        elif chunk:
            constraint.push_text(chunk.encode())
        constraint.push_special(match.group())
        pos = match.end()
    assert constraint.done


@pytest.mark.parametrize("name", NAMES)
def test_grammar_accepts_every_serialized_frame(name: str) -> None:
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    for seed in range(3):
        for inverse in (False, True):
            steps = (sample_inverse if inverse else sample_forward)(program, result, random.Random(seed))
            prev = None
            for state, _ in steps:
                walk(facts, prev, inverse, fmt.frame_target(state, prev, inverse))
                prev = state


@pytest.mark.parametrize("name", ["nested_calls", "class_inheritance", "generator_yield_from", "module_script"])
def test_random_paths_through_the_grammar_always_parse(name: str) -> None:
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    steps = sample_forward(program, result, random.Random(1))
    pieces = [bytes([b]) for b in range(32, 127)] + [b'"', b'", ', b'{"', b'": "', b"12", b'"..": ".."', b"}"]
    rng = random.Random(0)
    for _ in range(60):
        prev = steps[rng.randrange(len(steps))][0] if rng.random() < 0.7 else None
        inverse = rng.random() < 0.3
        constraint, out = FrameConstraint(facts, prev, inverse), fmt.FRAME
        for _ in range(3000):
            if constraint.done:
                break
            if constraint.slot_kind == "src":
                out += constraint.forced_text() or ""
                constraint.push_forced()
                continue
            options = [("s", t) for t in constraint.allowed_specials()]
            options += [("t", p) for p in pieces if constraint.accepts_text(p)]
            assert options, f"dead end after {out!r}"
            kind, value = rng.choice(options)
            if kind == "s":
                constraint.push_special(value)  # type: ignore[arg-type]
                out += value  # type: ignore[operator]
            else:
                constraint.push_text(value)  # type: ignore[arg-type]
                out += value.decode()  # type: ignore[union-attr]
        assert constraint.done, out
        parsed = fmt.parse_frame(out, prev, inverse)
        assert isinstance(parsed, State), (parsed, out)
        if parsed.stack and program.entry is not None:
            assert all(f.function != "<module>" for f in parsed.stack)
