"""`ndb eval next-state` on a tiny trained checkpoint and a tiny built dataset: what it counts and how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_backend.data.build import build_dataset
from model_backend.eval.next_state import COMPONENTS, compare, evaluate, format_table
from model_backend.program import Program
from model_backend.state import State
from tests.worker_model import build_tiny_checkpoint

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


def test_next_state_table_counts_every_transition_once_per_grouping(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build_dataset(data, seed=3, n_generated=0, programs=PROGRAMS, traj_per_program=3, inverse_fraction=0.4,
                  heldout_fraction=0.0, workers=1, progress=False)
    model = build_tiny_checkpoint(tmp_path / "model")
    result = evaluate(str(model), str(data), split="train", progress=False)
    table, n = result["table"], result["transitions"]
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
