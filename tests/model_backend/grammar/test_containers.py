"""Containers (model_backend/grammar/containers.py): inert lines, appends, item stores, attribute updates
and container changes computed from shown values; sound on real traces, tight where they should be."""

from __future__ import annotations

import ast
import copy
import random
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.back import container_before
from model_backend.grammar.containers import attribute_updates, plain_classes
from model_backend.program import Program
from model_backend.sampler import sample_forward
from model_backend.sandbox import Limits, run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import (
    COMPUTED,
    LOOPS,
    NAMES,
    forward_steps_checked,
    frame_accepted,
    line_frame,
    locals_accepted,
    on_every_traced_program,
    rules_on_a_program_traced_here,
    state_at,
)
from tests.support.corpus import traced

INERT = """\
from collections import defaultdict
def f(xs, n):
    d = defaultdict(list)
    alias = xs
    y = d[n]
    z = xs + [n] if n > 0 else xs[:1]
    alias += [2]
    a, b = xs[0], f"{z}"
    a, b = z
    if a in xs and not b: alias.append(a)
    while n < 0:
        n = -n
    return (
        a,
        z)
"""


def test_the_inert_lines_and_what_they_read() -> None:
    from model_backend.grammar.containers import inert_lines

    lines = inert_lines(ast.parse(INERT))
    assert lines == {4: {"xs"}, 5: {"d", "n"}, 6: {"xs", "n"}, 8: {"xs", "z"}, 11: {"n"}, 12: {"n"},
                     13: {"a", "z"}, 14: {"a", "z"}, 15: {"a", "z"}}
    # 3 calls, 7 changes a list in place, 9 unpacks a value (which may run a generator), 10 holds an
    # `if` and a statement. A class's operators may be the program's code: no line is inert.
    assert inert_lines(ast.parse(INERT + "class K:\n    def __eq__(self, other):\n        return True\n")) == {}  # its operators may be the program's code
    plain = inert_lines(ast.parse("class K:\n    pass\n" + INERT))  # a plain class: the same lines, two further on
    assert plain.items() >= {line + 2: reads for line, reads in inert_lines(ast.parse(INERT)).items()}.items()


def _steps_from_inert_lines(program: Program, events: list) -> int:
    """Check, on a trace, that the frame's next event after an inert line whose reads hold builtin values
    changes no variable but those the line binds; return how many steps were checked."""
    from model_backend.grammar.shown import builtin_value as _builtin_value

    facts = ProgramFacts.of(program)
    last: dict[int, Any] = {}
    checked = 0
    for event in events:
        before = last.pop(event.frame_id, None)
        if (event.event in ("line", "return") and before is not None and before.line in facts.inert
                and all(_builtin_value(before.locals.get(n)) for n in facts.inert[before.line])):
            changed = {n for n in set(before.locals) | set(event.locals) if before.locals.get(n) != event.locals.get(n)}
            allowed = facts.binds.get(before.line, frozenset()) | facts.shared
            assert changed <= allowed, (before.function, before.line, event.line, changed - allowed)
            checked += 1
        if event.event == "line":
            last[event.frame_id] = event
    return checked


test_every_traced_step_from_an_inert_line_changes_only_what_it_binds = on_every_traced_program(_steps_from_inert_lines)


def test_a_program_traced_here_keeps_the_inert_rule() -> None:
    """A defaultdict's lookup (line 5) inserts a key, and `alias += [2]` (line 7) changes xs through its
    alias: the rule must stay off for both, and hold for the others."""
    program = Program(source=INERT, entry="f([1], 3)")
    result = run_trace(program)
    assert _steps_from_inert_lines(program, result.events) >= 5
    d_before, d_after = (e.locals["d"] for e in result.events if e.event == "line" and e.line in (5, 6))
    assert d_before != d_after  # what the repr check guards against
    xs_before, xs_after = (e.locals["xs"] for e in result.events if e.event == "line" and e.line in (7, 8))
    assert xs_before != xs_after


def test_the_grammar_keeps_a_diff_to_what_an_inert_line_binds() -> None:
    """After step_over from `z = xs + [n] ...` (line 6), a diff may name z only: not the list xs, which it
    may name after line 7 (`alias += [2]`, with alias), nor after line 6 once a read name holds an object of another type."""
    facts = ProgramFacts.of(Program(source=INERT, entry="f([1], 3)"))
    local = {"xs": "[1]", "n": "3", "d": "defaultdict(<class 'list'>, {3: []})", "alias": "[1]", "y": "[]"}

    def accepted(line: int, locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="f", line=line)], locals=local | changes)
        return locals_accepted(facts, prev, line + 1, locals_text, "step_over")

    assert accepted(6, '{"..": "..", "z": "[1, 3]"}')
    assert not accepted(6, '{"..": "..", "z": "[1, 3]", "xs": "[1, 2]"}')
    assert not accepted(6, '{"..": "..", "z": "[1, 3]", "y": "[2]"}')
    assert accepted(7, '{"..": "..", "alias": "[1, 2]", "xs": "[1, 2]"}', z="[1, 3]")  # the same list
    assert not accepted(7, '{"..": "..", "xs": "[1, 2]"}', z="[1, 3]")  # alias must show `alias + [2]`
    assert accepted(6, '{"..": "..", "z": "[1, 3]", "y": "[2]"}', xs="<generator object g>")
    assert accepted(5, '{"..": "..", "y": "[]", "d": "defaultdict(<class \'list\'>, {3: [], 4: []})"}')


def test_the_lines_that_append_a_name_or_a_literal() -> None:
    from model_backend.grammar.containers import appended_values

    source = ("def f(xs, y):\n    xs.append(y)\n    xs.append('a')\n    xs.append(xs)\n    xs.append(y + 1)\n"
              "    xs.append([1])\n    xs.append(y); y = 2\n    xs.extend(y)\n")
    assert appended_values(ast.parse(source), 200) == {2: ("xs", ("name", "y")), 3: ("xs", ("literal", "'a'"))}
    # not 4 (the list into itself), 5 (a computed value), 6 (a list literal: a mutable object), 7 (two
    # statements), 8 (extend); nothing where the program's own objects could print like a list
    assert appended_values(ast.parse("class L(list):\n    pass\n" + source), 200) == {}


def test_the_grammar_writes_the_list_an_append_makes() -> None:
    facts = ProgramFacts.of(Program(source=LOOPS, entry="count(['ab'], {}, 2)"))
    shown = {"words": "['ab']", "table": "{}", "n": "2", "total": "0", "word": "'ab'"}

    def accepted(locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=8, stack=[StackFrame(function="count", line=8)], locals=shown | changes)
        return locals_accepted(facts, prev, 5, locals_text, "step_over")

    assert accepted('{"..": "..", "seen": "[\'a\', \'b\']"}', seen="['a']", ch="'b'")  # `seen.append(ch)`
    assert not accepted('{"..": "..", "seen": "[\'b\', \'a\']"}', seen="['a']", ch="'b'")
    assert not accepted('{"..": ".."}', seen="['a']", ch="'b'")
    assert accepted('{"..": "..", "seen": "[\'b\']"}', seen="[]", ch="'b'")
    assert accepted('{"..": "..", "seen": "[\'b\', \'a\']"}', seen="['a', ...", ch="'b'")  # cut: not known


STORES = """\
def tally(text, table, xs):
    seen = {}
    for ch in text:
        seen[ch] = seen.get(ch, 0) + 1
    table[1] = 'one'
    table[True] = len(seen)
    table['k'] += len(xs)
    xs[-1] = xs[0] * 2
    xs.insert(0, len(seen))
    xs.insert(-1, 'mid')
    xs.insert(99, [c for c in text if c != 'a'])
    xs.append(sorted(seen))
    big = list(range(40))
    big.append('x' * 60)
    big[0] = xs
    xs.append(xs)
    table[ch] = helper(ch)
    table[ch * 2] = 1
    seen[ch] = seen.pop(ch)
    return seen, table, xs, big


def helper(ch):
    return ch.upper()
"""


def test_the_lines_that_store_one_item() -> None:
    from model_backend.grammar.containers import ItemStore, item_stores

    def store(name: str, kind: str, key: tuple[str, str] | None, reads: set[str], augmented: bool = False) -> ItemStore:
        return ItemStore(name, kind, key, augmented, frozenset(reads))

    assert item_stores(ast.parse(STORES), 200) == {
        4: store("seen", "item", ("name", "ch"), {"seen", "ch"}),
        5: store("table", "item", ("literal", "1"), {"table"}),
        6: store("table", "item", ("literal", "True"), {"table", "seen"}),
        7: store("table", "item", ("literal", "'k'"), {"table", "xs"}, augmented=True),
        8: store("xs", "item", ("literal", "-1"), {"xs"}),
        9: store("xs", "insert", ("literal", "0"), {"xs", "seen"}),
        10: store("xs", "insert", ("literal", "-1"), {"xs"}),
        11: store("xs", "insert", ("literal", "99"), {"xs", "text"}),  # `c` is the comprehension's
        12: store("xs", "append", None, {"xs", "seen"}),
        14: store("big", "append", None, {"big"}),
        15: store("big", "item", ("literal", "0"), {"big", "xs"}),
        16: store("xs", "append", None, {"xs"}),
    }  # not 17 (a call of the program's function), 18 (a key computed), 19 (pop changes the dict)
    assert item_stores(ast.parse("class K:\n    def __eq__(self, other):\n        return True\n" + STORES), 200) == {}  # an object's operators may be the program's
    assert item_stores(ast.parse("class C:\n    pass\n" + STORES), 200) == {  # a plain class: two lines further on
        line + 2: store for line, store in item_stores(ast.parse(STORES), 200).items()}


def test_a_program_traced_here_keeps_the_items_a_store_leaves() -> None:
    """New keys and old ones, a key equal to another of another type (True and 1), an augmented store,
    negative indexes, inserts clamped at both ends, a list whose repr the tracer cuts after the step,
    and a list appended to itself (its repr shows `[...]`, after which the rule is off)."""
    assert rules_on_a_program_traced_here(STORES, "tally('abca', {1: 'x', 'k': 2}, [1, 2, 3])")["stores"] >= 20


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_store_keeps_the_other_items(name: str) -> None:
    program, result = traced(name)
    forward_steps_checked(program, result, ("step_over",))


def test_the_grammar_keeps_the_items_a_store_leaves() -> None:
    facts = ProgramFacts.of(Program(source=STORES, entry="tally('ab', {}, [1])"))
    shown = {"text": "'abca'", "table": "{1: 'x', 'k': 2}", "xs": "[1, 2, 3]", "seen": "{'a': 1, 'b': 1}", "ch": "'a'"}

    def accepted(line: int, locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="tally", line=line)], locals=shown | changes)
        return locals_accepted(facts, prev, 3 if line == 4 else line + 1, locals_text, "step_over")

    def diff(**changes: str) -> str:
        return fmt._json({"..": "..", **changes})

    def seen(text: str) -> str:
        return diff(seen=text)

    assert accepted(4, seen("{'a': 2, 'b': 1}"))  # `seen[ch] = seen.get(ch, 0) + 1`
    assert not accepted(4, seen("{'a': 3, 'b': 1}"))  # the value evaluation.py gives, 2
    assert not accepted(4, seen("{'a': 2, 'b': 2}"))  # another item changed
    assert not accepted(4, seen("{'a': 1, 'b': 1, 'aa': 1}"))  # a key made up
    assert not accepted(4, seen("{'b': 1, 'a': 2}"))  # an old key moved
    assert not accepted(4, seen("{'a': 2, 1, 'b': 1}"))
    assert not accepted(4, '{"..": ".."}')  # a's value changed to 2: the diff must say so
    assert accepted(4, '{"..": ".."}', seen="{'a': 1, 'b': 1, ...")  # a cut dict: free, even left out
    assert accepted(4, seen("{'a': 1, 'b': 1, 'c': 1}"), ch="'c'")  # a new key goes last
    assert not accepted(4, seen("{'c': 1, 'a': 1, 'b': 1}"), ch="'c'")
    assert not accepted(4, '{"..": ".."}', ch="'c'")  # a new key changes the dict
    assert accepted(4, seen("{'a': 1, 'b': 1, 'c': 1}"), ch="<Key object>")  # not a builtin value: free
    assert accepted(4, seen("{'b': 1, 'c': 1}"), seen="{'a': 1, 'b': 1, ...")  # a cut dict: free

    def table(text: str) -> str:
        return diff(table=text)

    assert accepted(6, table("{1: 2, 'k': 2}"))  # `table[True] = ...` stores under the equal key 1
    assert not accepted(6, table("{1: 'x', 'k': 2, True: 2}"))
    assert accepted(7, table("{1: 'x', 'k': 5}"))  # `table['k'] += len(xs)`
    assert accepted(7, '{"..": ".."}', table="{1: 'x'}")  # the key is missing: a KeyError, and the rule is off

    def xs(text: str) -> str:
        return diff(xs=text)

    assert accepted(8, xs("[1, 2, 2]"))  # `xs[-1] = xs[0] * 2`
    assert not accepted(8, xs("[2, 2, 3]"))
    assert accepted(9, xs("[2, 1, 2, 3]"))  # `xs.insert(0, len(seen))`
    assert not accepted(9, xs("[1, 2, 3, 2]"))
    assert accepted(10, xs("[1, 2, 'mid', 3]"))  # `xs.insert(-1, 'mid')`
    assert accepted(11, xs("[1, 2, 3, ['b', 'c']]"))  # `xs.insert(99, ...)`: at the end
    assert not accepted(11, xs("[1, 2, 3]"))
    long = "[" + ", ".join(map(str, range(40)))
    assert accepted(14, diff(big=(long + ", '" + "x" * 60)[:200] + "..."), big=long + "]")  # cut in the new item
    assert not accepted(14, diff(big=long + ", 'xxxx']"), big=long + ", 40]")


GRIDS = """\
def fill(rows, cols, table):
    grid = [[0 for _ in range(cols)] for _ in range(rows)]
    same = [[0] * cols] * rows
    for i in range(rows):
        for j in range(cols):
            grid[i][j] = i * cols + j
            same[i][j] += 1
    table['a'][0] = len(grid)
    grid[-1][0] = table['b']
    return grid, same, table
"""


def test_the_lines_that_store_one_item_of_an_inner_list_or_dict() -> None:
    from model_backend.grammar.containers import item_stores

    found = item_stores(ast.parse(GRIDS), 200)
    assert {line: (store.container, store.outer, store.key, store.augmented) for line, store in found.items()} == {
        6: ("grid", ("name", "i"), ("name", "j"), False),
        7: ("same", ("name", "i"), ("name", "j"), True),
        8: ("table", ("literal", "'a'"), ("literal", "0"), False),
        9: ("grid", ("literal", "-1"), ("literal", "0"), False),
    }
    assert found[6].reads == frozenset({"grid", "i", "j", "cols"})


def test_a_program_traced_here_keeps_the_items_an_inner_store_leaves() -> None:
    counts = rules_on_a_program_traced_here(GRIDS, "fill(3, 2, {'a': [5, 6], 'b': 7})")
    assert counts["stores"] >= 10  # `same` holds one list three times: its stores stay free


def test_the_grammar_keeps_the_other_items_of_a_grid() -> None:
    facts = ProgramFacts.of(Program(source=GRIDS, entry="fill(2, 2, {})"))

    def accepted(line: int, locals_text: str, **shown: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="fill", line=line)], locals=shown)
        return locals_accepted(facts, prev, {7: 5}.get(line, line + 1), locals_text, "step_over")

    grid = {"grid": "[[0, 1], [0, 0]]", "i": "1", "j": "0", "cols": "2"}
    assert accepted(6, '{"..": "..", "grid": "[[0, 1], [2, 0]]"}', **grid)
    assert not accepted(6, '{"..": "..", "grid": "[[0, 1], [2, 2]]"}', **grid)  # another item of the row
    assert not accepted(6, '{"..": "..", "grid": "[[9, 1], [2, 0]]"}', **grid)  # another row
    same = {"same": "[[1, 0], [1, 0]]", "i": "0", "j": "1"}
    assert accepted(7, '{"..": "..", "same": "[[1, 1], [1, 1]]"}', **same)  # one list twice: both rows show it
    table = {"table": "{'a': [5, 6], 'b': 7}", "grid": "[[0]]"}
    assert accepted(8, '{"..": "..", "table": "{\'a\': [1, 6], \'b\': 7}"}', **table)
    assert not accepted(8, '{"..": "..", "table": "{\'a\': [1, 6], \'b\': 8}"}', **table)


MUTATING = """\
def two_sum(array, target):
    seen = {}
    grid = [[0, 0], [1, 1]]
    row = grid[1]
    for index, num in enumerate(array):
        seen[target - num] = index
        grid[index % 2][0] += num
        row.append(len(seen))
        seen.update(row=index)
        array[0], array[1] = array[1], array[0]
        other = seen.get(num, row)
        f(seen)
    return seen, grid


def f(d):
    d.clear()
"""


def test_the_lines_that_change_objects_only_through_names() -> None:
    from model_backend.grammar.containers import mutating_lines

    names = frozenset
    assert mutating_lines(ast.parse(MUTATING)) == {
        6: (names({"seen", "target", "num", "index"}), names({"seen"})),
        7: (names({"grid", "index", "num"}), names({"grid"})),
        8: (names({"row", "seen"}), names({"row"})),
        9: (names({"seen", "index"}), names({"seen"})),
        10: (names({"array"}), names({"array"})),
        17: (names({"d"}), names({"d"})),
    }  # not 11 (it binds, `get` only reads: the inert rule's), not 12 (a call of the program's code)
    assert mutating_lines(ast.parse("class K:\n    def __eq__(self, other):\n        return True\n" + MUTATING)) == {}  # an object's operators may be the program's
    assert mutating_lines(ast.parse("class A:\n    pass\n" + MUTATING)) == {  # a plain class: two lines further on
        line + 2: names for line, names in mutating_lines(ast.parse(MUTATING)).items()}


def test_a_store_leaves_the_objects_it_cannot_reach() -> None:
    """After step_over from `seen[target - num] = index` the list `array` keeps its value (the model had
    written a loop of text there), `seen` may change; after `grid[index % 2][0] += num`, `row` may
    change too: its repr is inside grid's, and it is grid's row."""
    facts = ProgramFacts.of(Program(source=MUTATING, entry="two_sum([4, 11], 7)"))
    shown = {"array": "[4, 11]", "target": "7", "seen": "{}", "grid": "[[0, 0], [1, 1]]", "row": "[1, 1]",
             "index": "0", "num": "4"}

    def accepted(line: int, locals_text: str, to: int | None = None) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="two_sum", line=line)], locals=shown)
        return locals_accepted(facts, prev, to or line + 1, locals_text, "step_over")

    assert accepted(6, '{"..": "..", "seen": "{3: 0}"}')
    assert not accepted(6, '{"..": "..", "seen": "{3: 0}", "array": "[0: 0: 0]"}')
    assert not accepted(6, '{"..": "..", "grid": "[[0, 0]]"}')
    assert accepted(7, '{"..": "..", "grid": "[[4, 0], [1, 1]]"}')
    assert accepted(7, '{"..": "..", "grid": "[[0, 0], [5, 1]]", "row": "[5, 1]"}')
    assert not accepted(7, '{"..": "..", "array": "[4]"}')
    assert accepted(12, '{"..": "..", "array": "[4]"}', to=5)  # f is the program's code: anything mutable may change


def test_a_program_traced_here_changes_only_what_its_lines_reach() -> None:
    counts = rules_on_a_program_traced_here(MUTATING.replace("        f(seen)\n", ""), "two_sum([4, 11, 2], 7)")
    assert counts["mutating"] >= 20


@pytest.mark.parametrize(("statement", "values"), [
    ("lis.append(int(i))", {"lis": [5], "i": "6"}),
    ("elements.insert(0, len(elements))", {"elements": [1, 0]}),
    ("seq.sort(reverse=True)", {"seq": [3, 1, 2]}),
    ("seen[target - num] = index", {"seen": {0: 0}, "target": 7, "num": 4, "index": 1}),
    ("scores[char] = scores.get(char, 0) + 1", {"scores": {"w": 1}, "char": "w"}),
    ("num_arr[idx[0]] = (num_arr[idx[0]] + 1) % 10", {"num_arr": [1, 9], "idx": (1, 9)}),
    ("grid[i] += [n]", {"grid": [[1], [2]], "i": 1, "n": 3}),
    ("del lookup['1F']", {"lookup": {"1F": 2, "o": 0}}),
    ("xs[1:3] = xs", {"xs": [1, 2, 3, 4]}),
    ("xs.append(xs)", {"xs": [1]}),  # it holds itself: `[1, [...]]`, as Python writes it
    ("last = stack.pop()", {"stack": [1, 2]}),
    ("d.update(b=2)", {"d": {"a": 1}}),
    ("old = d.setdefault('k', [])", {"d": {}}),
])
def test_a_container_changes_as_python_changes_it(statement: str, values: dict[str, object]) -> None:
    from model_backend.grammar.containers import mutation_reprs, mutations

    program = f"def f({', '.join(values)}):\n    {statement}\n"
    (container, node, result), = mutations(ast.parse(program)).values()
    shown = {name: repr(v) for name, v in values.items()}
    namespace = copy.deepcopy(values)
    exec(statement, {}, namespace)  # noqa: S102 - the test's own constant statements, to compare with
    expected = (repr(namespace[container]), repr(namespace[result]) if result else None)
    assert mutation_reprs(node, container, shown, 200) == expected


@pytest.mark.parametrize(("statement", "shown"), [
    ("xs.append(1)", {"xs": "[1, 2..."}),  # cut
    ("xs.remove(5)", {"xs": "[1]"}),  # raises
    ("xs.sort()", {"xs": "[1, 'a']"}),  # raises
    ("xs.append(ys)", {"xs": "[1]", "ys": "[[1]]"}),  # ys may hold xs itself
    ("xs.append(ys)", {"xs": "[1]", "ys": "[1]"}),  # ys may be xs
    ("s.add(1)", {"s": "{2}"}),  # a set
    ("d[k] += 1", {"d": "{}", "k": "'a'"}),  # a KeyError
    ("xs[5] = 0", {"xs": "[1]"}),  # an IndexError
])
def test_a_change_the_values_do_not_tell(statement: str, shown: dict[str, str]) -> None:
    from model_backend.grammar.containers import mutation_reprs, mutations

    found = mutations(ast.parse(f"def f({', '.join(shown)}):\n    {statement}\n"))
    assert all(mutation_reprs(node, container, shown, 200) is None for container, node, _ in found.values())


def test_the_statements_that_change_one_container() -> None:
    from model_backend.grammar.containers import mutations

    source = ("def f(xs, d, g):\n    xs.append(len(d))\n    xs.append(g(1))\n    d[xs[0]] = xs\n    y = xs.pop()\n"
              "    xs.count(1)\n    xs.sort(key=len)\n    d.k = 1\n")
    assert {line: (c, r) for line, (c, _, r) in mutations(ast.parse(source)).items()} == {
        2: ("xs", None), 4: ("d", None), 5: ("xs", "y")}  # not 3 (the program's g), 6 (count only reads),
    # 7 (a key function), 8 (an attribute)
    assert mutations(ast.parse("class A:\n    def __repr__(self):\n        return '[]'\n" + source)) == {}


def test_the_grammar_writes_the_container_a_statement_leaves() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"s": "'5 apples'", "n": "19", "lis": "[5]", "i": "'6'"}
    constraint = FrameConstraint(facts, state_at("fruit_distribution", 19, shown), False, "step_over", ())
    assert frame_accepted(constraint, line_frame(facts, 17, '{"..": "..", "lis": "[5, 6]"}'))
    constraint = FrameConstraint(facts, state_at("fruit_distribution", 19, shown), False, "step_over", ())
    assert not frame_accepted(constraint, line_frame(facts, 17, '{"..": "..", "lis": "[5, 1]"}'))


ATTRIBUTES = """\
class Cart:
    def __init__(self, owner):
        self.items = []
        self.count = 0
        self.owner = owner

    def add(self, price):
        self.items.append(price)
        self.count += 1
        self.total = self.count * 2
        self.total = self.rate()
        return self.count

    def rate(self):
        return 2


def grow(cart, extra):
    other = cart
    cart.items.append(extra)
    return other


def main():
    c = Cart('bo')
    c.add(3)
    c.add(4.5)
    grow(c, 5)
    return c.count
"""

ATTRIBUTES_PROGRAM = Program(source=ATTRIBUTES, entry="main()")


def accepted(facts: ProgramFacts, prev: State, line: int, locals_text: str) -> bool:
    """Whether the grammar takes `locals_text` as the locals of a line event on `line` after step_over from `prev`."""
    constraint = FrameConstraint(facts, prev, False, "step_over")
    constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
    constraint.push_special(fmt.LINENO)
    constraint.push_text(str(line).encode())
    constraint.push_special(fmt.ARG)
    fed = constraint.slot.feed(locals_text.encode()) if constraint.slot is not None else None
    return fed is not None and bool(fed.complete)


def diff(**values: str) -> str:
    return fmt._json({"..": "..", **values})


def in_add(line: int, cart: str, **more: str) -> State:
    return State(event="line", line=line, stack=[StackFrame(function="main", line=26), StackFrame(function="add", line=line)],
                 locals={"self": cart, "price": "3", **more})


V3 = ProgramFacts.of(ATTRIBUTES_PROGRAM, objects=True)


def test_the_facts_name_the_updates_and_the_plain_class() -> None:
    tree = ast.parse(ATTRIBUTES)
    assert plain_classes(tree) == {"Cart": frozenset({"__init__", "add", "rate"})}
    updates = attribute_updates(tree)
    assert {line: (u.owner, u.attribute, u.kind) for line, u in updates.items()} == {
        3: ("self", "items", "set"), 4: ("self", "count", "set"), 5: ("self", "owner", "set"),
        8: ("self", "items", "append"), 9: ("self", "count", "set"), 10: ("self", "total", "set"),
        20: ("cart", "items", "append")}  # not line 11: it calls the program's own rate()
    assert V3.attribute_updates.keys() == updates.keys()
    assert ProgramFacts.of(ATTRIBUTES_PROGRAM).attribute_updates == {} and ProgramFacts.of(ATTRIBUTES_PROGRAM).classes == {}  # version 2


def test_an_append_through_an_attribute_writes_the_object_with_the_item_added() -> None:
    prev = in_add(8, "Cart(items=[], count=0, owner='bo')")
    assert accepted(V3, prev, 9, diff(self="Cart(items=[3], count=0, owner='bo')"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[4], count=0, owner='bo')"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[3], count=1, owner='bo')"))
    assert not accepted(V3, prev, 9, diff())  # the object changed: the diff must say so
    prev = in_add(8, "Cart(items=[1, 'a'], count=2, owner=None)")
    assert accepted(V3, prev, 9, diff(self="Cart(items=[1, 'a', 3], count=2, owner=None)"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[1, 'a'], count=2, owner=None)"))


def test_an_augmented_and_a_computed_attribute_take_their_values() -> None:
    prev = in_add(9, "Cart(items=[3], count=0, owner='bo')")
    assert accepted(V3, prev, 10, diff(self="Cart(items=[3], count=1, owner='bo')"))
    assert not accepted(V3, prev, 10, diff(self="Cart(items=[3], count=2, owner='bo')"))
    prev = in_add(10, "Cart(items=[3], count=1, owner='bo')")  # a new field comes last
    assert accepted(V3, prev, 11, diff(self="Cart(items=[3], count=1, owner='bo', total=2)"))
    assert not accepted(V3, prev, 11, diff(self="Cart(total=2, items=[3], count=1, owner='bo')"))
    prev = in_add(10, "Cart(items=[3], total=0, count=4, owner='bo')")  # an old one keeps its place
    assert accepted(V3, prev, 11, diff(self="Cart(items=[3], total=8, count=4, owner='bo')"))
    assert not accepted(V3, prev, 11, diff(self="Cart(items=[3], total=0, count=4, owner='bo')"))


def test_the_rule_holds_back_where_the_new_text_is_not_certain() -> None:
    wrong = diff(self="Cart(items=[9], count=0, owner='bo')")
    whole = "Cart(items=[], count=0, owner='bo')"
    assert not accepted(V3, in_add(8, whole), 9, wrong)  # the rule fires on the whole text
    assert accepted(ProgramFacts.of(ATTRIBUTES_PROGRAM), in_add(8, whole), 9, wrong)  # format 2: nothing changes
    cut = "Cart(items=[], count=0, owner='" + "o" * 200 + "..."
    assert accepted(V3, in_add(8, cut), 9, wrong)  # a cut text
    assert accepted(V3, in_add(8, "Cart(items=[], count=0, seen=[], owner='bo')"), 9, wrong)  # another field may hold the list
    assert accepted(V3, in_add(8, "Other(items=[], count=0)"), 9, wrong)  # not a class of the program
    assert accepted(V3, in_add(8, "Cart(items=[...], count=0)"), 9, wrong)  # not a list of literals
    # the line calls the program's own code
    assert accepted(V3, in_add(11, "Cart(items=[3], count=1, owner='bo', total=2)"), 12,
                    diff(self="Cart(items=[3], count=1, owner='bo', total=7)"))


def test_a_variable_that_may_hold_the_same_object_keeps_the_rule_off() -> None:
    def grow(cart: str, **more: str) -> State:
        return State(event="line", line=20, stack=[StackFrame(function="main", line=28), StackFrame(function="grow", line=20)],
                     locals={"cart": cart, "extra": "5", **more})

    text = "Cart(items=[3], count=1, owner='bo')"
    wrong = diff(cart="Cart(items=[3, 6], count=1, owner='bo')")
    assert not accepted(V3, grow(text), 21, wrong)
    assert accepted(V3, grow(text), 21, diff(cart="Cart(items=[3, 5], count=1, owner='bo')"))
    assert accepted(V3, grow(text, other=text), 21, wrong)  # `other` may be the same object
    assert accepted(V3, grow(text, other="[3]"), 21, wrong)  # or the same list


def _with_head(head: str, objects: bool = True) -> tuple[ProgramFacts, State, int]:
    """The facts of ATTRIBUTES with `class Cart:` replaced by `head`, and the state before line 8's append."""
    source = ATTRIBUTES.replace("class Cart:", head)
    shift = head.count("\n")
    prev = in_add(8 + shift, "Cart(items=[], count=0, owner='bo')").model_copy(update={
        "line": 8 + shift,
        "stack": [StackFrame(function="main", line=26 + shift), StackFrame(function="add", line=8 + shift)]})
    return ProgramFacts.of(Program(source=source, entry="main()"), objects=objects), prev, 9 + shift


def test_a_dataclass_a_builtin_base_or_a_base_defining_the_attribute_keeps_the_rule_off() -> None:
    wrong = diff(self="Cart(items=[9], count=0, owner='bo')")
    for head in ("from dataclasses import dataclass\n\n\n@dataclass\nclass Cart:",  # writes its own repr
                 "class Cart(dict):",  # prints like a dict
                 "class Base:\n    items = property(lambda s: [])\n\n\nclass Cart(Base):",  # a descriptor
                 "class Base:\n    def __repr__(self):\n        return 'Cart()'\n\n\nclass Cart(Base):"):
        facts, prev, line = _with_head(head)
        assert accepted(facts, prev, line, wrong), head
    facts, prev, line = _with_head("class Base:\n    pass\n\n\nclass Cart(Base):")  # a plain base
    assert not accepted(facts, prev, line, wrong)
    assert accepted(facts, prev, line, diff(self="Cart(items=[3], count=0, owner='bo')"))
    named = ATTRIBUTES + "\n\nPair = __import__('collections').namedtuple('Cart', 'items count')\n"
    assert "Cart" not in ProgramFacts.of(Program(source=named, entry="main()"), objects=True).classes


def test_every_traced_frame_passes_and_the_rule_fires() -> None:
    program = Program(source=ATTRIBUTES, entry="main()")
    result = run_trace(program, Limits(objects=True))
    facts = ProgramFacts.of(program, objects=True)
    fired = 0
    for seed in range(6):
        prev: State | None = None
        taken: str | None = None
        trail: list[tuple[State, str]] = []
        for state, action in sample_forward(program, result, random.Random(seed)):
            constraint = FrameConstraint(facts, prev, False, taken, tuple(trail))
            constraint.push_frame_text(fmt.frame_target(state, prev, False)[len(fmt.FRAME):])
            assert constraint.done
            keys = frozenset(k.encode() for k in facts.names)
            fired += bool(constraint._attribute_updated(keys))
            if prev is not None and taken is not None:
                trail.append((prev, taken))
            prev, taken = state, action.kind if action is not None else None
    assert fired >= 3


def test_a_step_back_onto_a_slice_store_of_a_builtin_call_is_left_free() -> None:
    """`l[::3] = sorted(l[::3])` (met in version-3 data) calls no method of `l`: back.container_before
    says nothing of the list before it (and does not fail)."""
    statement = ast.parse("l[::3] = sorted(l[::3])").body[0]
    assert container_before(statement, "l", None, {"l": "[1, 2, 3]"}, 200) is None
