"""`ndb eval next-state` on a tiny trained checkpoint and a tiny built dataset: what it counts and how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_backend.data.build import build_dataset
from model_backend.eval.next_state import COMPONENTS, compare, describe_error, evaluate, format_table
from model_backend.program import Program
from model_backend.state import State

pytestmark = pytest.mark.timeout(600)

PROGRAMS = [
    Program(source="def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
            entry="f([1, 2, 3])"),
    Program(source="def g(a):\n    return a * 2\n\n\ndef f(n):\n    out = []\n    for i in range(n):\n"
                   "        out.append(g(i))\n    return out\n", entry="f(3)"),
]


def test_compare_is_exact_only_when_every_field_matches() -> None:
    truth = State(event="line", line=3, function="f", locals={"x": "1", "y": "[1]"}, depth=0)
    assert compare(truth.model_copy(), truth) == {"exact": True, **{c: True for c in COMPONENTS}}
    wrong_value = compare(truth.model_copy(update={"locals": {"x": "1", "y": "[2]"}}), truth)
    assert wrong_value["exact"] is False and wrong_value["locals"] is False and wrong_value["line"] is True
    wrong_function = compare(truth.model_copy(update={"function": "g"}), truth)
    assert wrong_function["exact"] is False and all(wrong_function[c] for c in COMPONENTS)
    failed = compare(truth.model_copy(update={"error": "prediction failed"}), truth)
    assert not any(failed.values()) and not any(compare(None, truth).values())


def test_describe_error_names_each_wrong_field_truth_first() -> None:
    truth = State(event="line", line=3, function="f", locals={"x": "1", "y": "[1]"}, depth=0)
    predicted = truth.model_copy(update={"line": 4, "locals": {"x": "1", "y": "[2]", "z": "0"}})
    assert describe_error(predicted, truth) == {"line": [3, 4], "locals": {"y": ["[1]", "[2]"], "z": [None, "0"]}}
    assert describe_error(truth.model_copy(), truth) == {}
    assert describe_error(None, truth) == {"failed": "unparsable frame"}


def test_next_state_table_counts_every_transition_once_per_grouping(tiny_checkpoint: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    build_dataset(data, seed=3, n_generated=0, programs=PROGRAMS, traj_per_program=3, inverse_fraction=0.4,
                  heldout_fraction=0.0, workers=1, progress=False)
    model = tiny_checkpoint
    errors = tmp_path / "errors.jsonl"
    result = evaluate(str(model), str(data), split="train", progress=False, errors_path=errors)
    table, n = result["table"], result["transitions"]
    wrong = [json.loads(line) for line in errors.read_text().splitlines()]  # --errors: one line per miss
    assert len(wrong) == round(n * (1 - table["all"]["exact"]))
    assert all(error["diff"] and error["action"] and set(error["wrong"]) <= set(COMPONENTS) for error in wrong)
    assert n > 0 and table["all"]["n"] == n
    for prefix in ("action:", "horizon:"):
        assert sum(row["n"] for key, row in table.items() if key.startswith(prefix)) == n
    sources = {key: row for key, row in table.items() if key.startswith("source:") and "/" not in key}
    assert sum(row["n"] for row in sources.values()) == n
    bar = sum(row["n"] for key, row in table.items() if key.startswith("action:step_into") or key.startswith("action:step_over"))
    assert sum(row["n"] for key, row in table.items() if key.endswith("/into+over")) == bar
    assert table.get("forward", {"n": 0})["n"] + table.get("inverse", {"n": 0})["n"] == n
    for row in table.values():  # an exact prediction is right in every component
        assert all(0.0 <= row[c] <= 1.0 for c in COMPONENTS) and row["exact"] <= min(row[c] for c in COMPONENTS)
    assert result["ms_per_prediction"] > 0 and result["frame_tokens_per_s"] > 0
    text = format_table(result)
    assert text.splitlines()[0].split()[:3] == ["group", "n", "exact"] and f"{n} transitions" in text
    json.dumps(result)  # what --json writes
