"""`ndb eval realistic`: random rollouts scored stop by stop against the oracle, on small programs written here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_backend.engine.oracle import OracleEngine
from model_backend.eval.realistic import (
    BenchmarkError,
    breakpoint_lines,
    canonical,
    difference,
    draw_actions,
    evaluate,
    load_benchmark,
    reference_limits,
    rollout_actions,
)
from model_backend.eval.realistic_report import ACTIONS
from model_backend.sandbox import Limits
from model_backend.state import Action

INVENTORY = '''"""Restock an inventory from a list of orders."""
# entry: restock({"apple": 3, "pear": 0}, [("apple", 2), ("pear", 5), ("kiwi", 1)])
# kind: simulation


class Shelf:
    def __init__(self, name):
        self.name = name
        self.count = 0

    def __repr__(self):
        return f"Shelf({self.name!r}, {self.count})"


def apply(stock, name, count):
    if name not in stock:
        stock[name] = 0
    stock[name] += count
    return stock[name]


def restock(stock, orders):
    total = 0
    shelves = []
    for name, count in orders:
        total += apply(stock, name, count)
        shelf = Shelf(name)
        shelf.count = stock[name]
        shelves.append(shelf)
        print(name, stock[name])
    low = [n for n, c in stock.items() if c < 3]
    return total, sorted(low), shelves
'''

DIVIDE = '''"""Divide a budget into shares; a zero share raises."""
# entry: split_budget(100, [2, 0])


def share(total, parts):
    return total // parts


def split_budget(total, parts):
    out = []
    for p in parts:
        out.append(share(total, p))
    return out
'''

COUNTDOWN = '''"""Count down with a generator."""
# entry: collect(4)


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def collect(n):
    seen = []
    names = {"ann", "bob", "cy", "dee", "eve"}  # a set's order changes from run to run
    for value in countdown(n):
        seen.append(value * value)
    return seen, names
'''

TINY = '''"""Add two numbers."""
# entry: add(2, 3)


def add(a, b):
    c = a + b
    return c
'''


def write(root: Path, split: str, programs: dict[str, str]) -> Path:
    (root / split).mkdir(parents=True, exist_ok=True)
    for name, source in programs.items():
        (root / split / f"{name}.py").write_text(source)
    return root


def test_the_oracle_scores_every_stop_exact(tmp_path: Path) -> None:
    root = write(tmp_path, "dev", {"inventory": INVENTORY, "divide": DIVIDE, "countdown": COUNTDOWN})
    result = evaluate("dev", "oracle", root=root, rollouts=4, actions=12, seed=3, progress=False)
    assert result["scored"] == 3 and result["refused"] == result["broken"] == result["crashed"] == 0
    assert all(result["per_action"][kind]["total"] > 0 for kind in ACTIONS)  # every action was played
    assert result["all"]["exact"] == result["all"]["total"] > 20 and result["all"]["failed"] == 0
    assert result["return_value"] == {"exact": 3, "total": 3, "rate": 1.0}
    assert result["start"]["exact"] == result["start"]["total"] == 12
    played = [r["played"] for d in result["detail"] for r in d["rollouts"]]
    assert result["trust_horizon"]["values"] == played  # no miss: the horizon is the whole rollout
    divide = next(d for d in result["detail"] if d["name"] == "divide")
    assert divide["return"]["expected"] == "raises" and "ZeroDivisionError" in divide["return"]["exception"]
    inventory = next(d for d in result["detail"] if d["name"] == "inventory")
    assert inventory["kind"] == "simulation" and inventory["return"]["expected"].startswith("returns (11, ['kiwi'], [Shelf(")


def test_a_different_engine_is_scored_on_its_misses(tmp_path: Path) -> None:
    """An engine that writes values cut shorter than the reference's misses the stops where a value is long,
    and the first divergence says where and how (it cannot be put back on the true state: the rollout stops)."""
    grow = '"""Double a string."""\n# entry: grow(4)\n\n\ndef grow(n):\n    s = "ab"\n    for _ in range(n):\n        s = s * 2\n    return s\n'
    root = write(tmp_path, "dev", {"grow": grow})
    engine = OracleEngine(Limits(max_repr=8))
    result = evaluate("dev", root=root, actions=20, seed=0, progress=False, engine=engine)
    rollout = result["detail"][0]["rollouts"][0]
    assert rollout["start_exact"]  # n=4: nothing to cut yet
    divergence = rollout["first_divergence"]
    assert divergence is not None and rollout["trust_horizon"] == divergence["step"] == rollout["played"] - 1
    assert rollout["stopped"].startswith("cannot resume") and rollout["stops"][-1]["exact"] is False
    assert result["all"]["exact"] == divergence["step"] == result["all"]["total"] - 1
    want, got = divergence["diff"].get("locals", {}).get("s") or divergence["diff"]["value"]
    assert len(want) > 8 and got.endswith("...") and divergence["expected"]["line"] == divergence["got"]["line"]
    assert result["return_value"] == {"exact": 0, "total": 1, "rate": 0.0}  # 'ab' * 16 is longer than 8


def test_sets_compare_in_any_order() -> None:
    assert canonical("{'cy', 'ann', ('b', frozenset({'y', 'x'}))}") == canonical("{('b', frozenset({'x', 'y'})), 'ann', 'cy'}")
    assert canonical("{'ann', 'cy'}") != canonical("{'ann', 'dee'}")
    assert canonical("[3, 1, 2]") == "[3, 1, 2]" and canonical("{'ab', 'c...") == "{'ab', 'c..."
    want = {"event": "line", "line": 3, "function": "f", "locals": {"s": "{'a', 'b'}", "xs": "[1, 2]"}, "value": None,
            "depth": 0, "exit": None, "output": "{'a', 'b'}\n"}
    assert difference(want, {**want, "locals": {"s": "{'b', 'a'}", "xs": "[1, 2]"}}) == {}
    assert difference(want, {**want, "locals": {"s": "{'b', 'a'}", "xs": "[2, 1]"}}) == {"locals": {"xs": ["[1, 2]", "[2, 1]"]}}
    assert difference(want, {**want, "output": "{'b', 'a'}\n", "depth": 1}) == {
        "output": ["{'a', 'b'}\n", "{'b', 'a'}\n"], "depth": [0, 1]}  # printed text is compared as printed


def test_the_same_seed_draws_the_same_actions(tmp_path: Path) -> None:
    root = write(tmp_path, "dev", {"inventory": INVENTORY})
    benchmark = load_benchmark("dev", root)[0]
    first = rollout_actions(benchmark, 7, 0, 30)
    assert first == rollout_actions(benchmark, 7, 0, 30)
    assert first != rollout_actions(benchmark, 8, 0, 30) and first != rollout_actions(benchmark, 7, 1, 30)
    lines = breakpoint_lines(benchmark.program)
    assert all(set(a.lines) <= set(lines) and len(a.lines) == 1 for a in first if a.kind == "breakpoint")
    # Statements inside functions (methods and a comprehension's line included), never a def or the module's lines.
    assert lines == [8, 9, 12, 16, 17, 18, 19, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]
    kinds = {a.kind for a in draw_actions(random.Random(0), [3], 200)}
    assert kinds == set(ACTIONS)


def test_the_loader_rejects_a_file_without_an_entry(tmp_path: Path) -> None:
    write(tmp_path, "dev", {"fine": TINY, "no_entry": '"""No entry."""\n\n\ndef f(x):\n    return x\n'})
    with pytest.raises(BenchmarkError, match="no_entry.py: no '# entry"):
        load_benchmark("dev", tmp_path)
    with pytest.raises(BenchmarkError, match="unknown split"):
        load_benchmark("train", tmp_path)
    with pytest.raises(BenchmarkError, match="no programs"):
        load_benchmark("test", tmp_path)
    (tmp_path / "dev" / "no_entry.py").unlink()
    (benchmark,) = load_benchmark("dev", tmp_path)
    assert benchmark.name == "fine" and benchmark.program.entry == "add(2, 3)" and benchmark.kind is None


def test_a_program_whose_entry_fails_is_counted(tmp_path: Path) -> None:
    root = write(tmp_path, "dev", {"tiny": TINY, "missing": TINY.replace("# entry: add(2, 3)", "# entry: plus(2, 3)"),
                                   "module_fails": TINY.replace("def add", "1 / 0\n\n\ndef add")})
    result = evaluate("dev", "oracle", root=root, actions=5, progress=False)
    status = {d["name"]: d["status"] for d in result["detail"]}
    assert status == {"tiny": "ok", "missing": "broken", "module_fails": "broken"}
    assert result["broken"] == 2 and result["scored"] == 1 and result["all"]["exact"] == result["all"]["total"] > 0
    assert "plus" in next(d["error"] for d in result["detail"] if d["name"] == "missing")


def test_a_program_over_its_time_limit_stops_its_rollouts(tmp_path: Path) -> None:
    root = write(tmp_path, "dev", {"tiny": TINY})
    result = evaluate("dev", "oracle", root=root, actions=5, progress=False, program_seconds=1e-6)
    (rollout,) = result["detail"][0]["rollouts"]
    assert rollout["stopped"] == "time limit" and rollout["played"] == 0 and result["timed_out"] == 1
    assert result["return_value"]["exact"] == 1  # the oracle's step is never paused


def test_programs_can_be_chosen_by_name(tmp_path: Path) -> None:
    from dap_server.cli import app

    root = write(tmp_path, "dev", {"tiny": TINY, "divide": DIVIDE, "countdown": COUNTDOWN})
    result = evaluate("dev", "oracle", root=root, actions=4, progress=False, names=["divide", "tiny"])
    assert [d["name"] for d in result["detail"]] == ["divide", "tiny"] and result["programs_chosen"] == ["divide", "tiny"]
    with pytest.raises(BenchmarkError, match="no program nowhere in the dev split"):
        evaluate("dev", "oracle", root=root, progress=False, names=["tiny", "nowhere"])
    refused = CliRunner().invoke(app, ["eval", "realistic", "--root", str(root), "--engine", "oracle", "--program", "nowhere"])
    assert refused.exit_code == 2 and "no program nowhere" in refused.output


def test_the_command_writes_json_and_plots(tmp_path: Path) -> None:
    from dap_server.cli import app

    root = write(tmp_path / "bench", "test", {"tiny": TINY, "divide": DIVIDE})
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["eval", "realistic", "--root", str(root), "--split", "test", "--engine", "oracle",
                                      "--actions", "6", "--rollouts", "2", "--seed", "5", "--json", str(out),
                                      "--plots", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    assert "trust horizon" in result.output and "ms per action: p50" in result.output
    saved = json.loads(out.read_text())
    assert saved["split"] == "test" and saved["seed"] == 5 and saved["engine"] == "oracle"
    assert saved["all"]["rate"] == 1.0 and len(saved["detail"]) == 2
    assert {d["name"] for d in saved["detail"]} == {"tiny", "divide"}
    for name in ("exact_per_action.png", "trust_horizon.png"):
        assert (tmp_path / "plots" / name).read_bytes()[:4] == b"\x89PNG"


def test_the_reference_writes_values_as_the_model_reads_them() -> None:
    limits = reference_limits(OracleEngine())
    assert limits.max_repr == Limits().max_repr and not limits.record_globals


def test_the_neural_engine_gets_a_complete_report(tmp_path: Path) -> None:
    """The shipped model on a tiny program, two actions; a program it refuses (an argument that is not a
    literal) is counted as refused. A missed stop puts it back on the true state."""
    from model_backend.engine import create_engine
    from model_backend.engine.base import StepwiseEngine
    from model_backend.eval.realistic import _put_back

    root = write(tmp_path, "dev", {"tiny": TINY, "refused": TINY.replace("add(2, 3)", "add(len, 3)")})
    engine = create_engine("neural")
    assert isinstance(engine, StepwiseEngine)
    result = evaluate("dev", root=root, actions=2, seed=1, progress=False, engine=engine)
    status = {d["name"]: d["status"] for d in result["detail"]}
    assert status == {"tiny": "ok", "refused": "refused"} and result["refused"] == 1
    assert result["engine"] == "neural" and result["model"]
    rollout = next(d for d in result["detail"] if d["name"] == "tiny")["rollouts"][0]
    assert rollout["played"] == 2 == result["all"]["total"] == sum(r["total"] for r in result["per_action"].values())
    assert result["ms_per_action"]["n"] == 2 and result["ms_per_action"]["p99"] > 0
    assert result["return_value"]["total"] == 1 and len(result["trust_horizon"]["values"]) == 1
    # Put back on a true state (what a miss does): the engine continues from there.
    program = next(b.program for b in load_benchmark("dev", root) if b.name == "tiny")
    reference = OracleEngine(reference_limits(engine))
    history = [reference.start(program), reference.step(Action(kind="step_into"))]
    _put_back(engine, program, history, [(history[0], "step_into")])
    assert engine.state == history[-1] and engine.trail == [(history[0], "step_into")]
