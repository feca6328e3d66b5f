"""Printing (model_backend/grammar/printing.py): what a `print(...)` line writes, computed from shown
values the way Python writes it."""

from __future__ import annotations

import ast
import copy

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.printing import print_reads, printed_text
from model_backend.program import Program
from tests.model_backend.grammar.support import (
    frame_accepted,
    line_frame,
    parsed_expression,
    rules_on_a_program_traced_here,
    state_at,
)

PRINTS = [
    ("print('letters:', total)", {"total": 17}),
    ("print(xs, d, sep=' | ', end='')", {"xs": [1, 'a', None], "d": {"k": (1, 2.5)}}),
    ("print()", {}),
    ("print(x / 3, flush=True)", {"x": 10}),
    ("print(f'{name}: {score:>6.2f} {flag!r} {items}', end='!\\n')", {"name": "ab", "score": 3.14159, "flag": True,
                                                                   "items": ["x"]}),
    ("print(f'{n:05d}|{s!r:>8}|{s:^7}|{n:x}')", {"n": 42, "s": "hi"}),
    ("print(*[], sep=None, end=None)" if False else "print(' '.join(w.upper() for w in words), len(words))",
     {"words": ["a", "bc"]}),
]


@pytest.mark.parametrize(("source", "values"), PRINTS)
def test_what_print_writes_is_what_python_writes(source: str, values: dict[str, object]) -> None:
    """Checked against Python itself printing the same constant values."""
    import contextlib
    import io

    call = parsed_expression(source)
    assert isinstance(call, ast.Call) and print_reads(call, set()) is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eval(source, {}, copy.deepcopy(values))  # the test's own constants: no program runs
    assert printed_text(call, {k: repr(v) for k, v in values.items()}) == out.getvalue()


@pytest.mark.parametrize("source", [
    "print(x, file=log)", "print(*xs)", "print(f(x))", "print(x, sep=s)", "print(f'{x:{width}}')", "print(x.attr)",
])
def test_prints_left_to_the_model(source: str) -> None:
    call = parsed_expression(source)
    assert isinstance(call, ast.Call) and print_reads(call, set()) is None


def test_a_print_the_values_do_not_tell() -> None:
    call = parsed_expression("print(x, f'{y:>20000}')")
    assert isinstance(call, ast.Call)
    assert printed_text(call, {"x": "[1, 2..."}) is None  # cut
    assert printed_text(call, {"x": "1", "y": "2"}) is None  # a width past the bound is not built
    assert printed_text(parsed_expression("print(s)"), {"s": "{1, 2}"}) is None  # type: ignore[arg-type]  # a set
    assert print_reads(parsed_expression("print(x)"), {"print"}) is None  # type: ignore[arg-type]  # rebound


PRINTING = """def report(words):
    total = 0
    for word in words:
        total += len(word)
        print(f'{word!r:>10} {len(word):3d}', total)
    mean = total / len(words)
    print('mean:', mean, sep='\t')
    if mean > 3:
        print('long words', end='')
    return total


def main():
    return report(['neural', 'debugger', 'dap'])
"""


def test_a_program_traced_here_prints_what_its_values_give() -> None:
    """Every true step of the traced program is accepted with the printed text and the silent steps forced."""
    counts = rules_on_a_program_traced_here(PRINTING, "main()")
    assert counts["printed"] >= 8 and counts["silent"] >= 10, counts


def test_the_grammar_writes_what_a_print_line_prints() -> None:
    facts = ProgramFacts.of(Program(source=PRINTING, entry="main()"))
    assert sorted(facts.printed) == [5, 7, 9]
    shown = {"words": "['ab']", "total": "2", "word": "'ab'", "mean": "2.0"}

    def accepted(line: int, to: int, stdout: str | None, changed: str = "") -> bool:
        constraint = FrameConstraint(facts, state_at("report", line, shown), False, "step_over", ())
        frame = line_frame(facts, to, '{"..": ".."' + changed + "}")
        if stdout is not None:
            frame = frame.replace(fmt.END_OF_FRAME, f"{fmt.STDOUT}{fmt._json(stdout)}{fmt.END_OF_FRAME}")
        return frame_accepted(constraint, frame)

    assert accepted(5, 3, "      'ab'   2 2\n")
    assert not accepted(5, 3, "      'ab'   2 3\n")
    assert not accepted(5, 3, None)  # it prints: the text is required
    assert accepted(7, 8, "mean:\t2.0\n")
    assert accepted(4, 5, None, ', "total": "4"')  # `total += len(word)` runs no code: nothing printed
    assert not accepted(4, 5, "x", ', "total": "4"')
    assert not ProgramFacts.of(Program(source="import sys\n" + PRINTING.replace("return total", "sys.stdout = None"),
                                       entry="main()")).printed  # a program that can redirect its output
