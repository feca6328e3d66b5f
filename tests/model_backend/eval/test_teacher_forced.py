"""The teacher-forced estimate of greedy exact match (model_backend/eval/teacher_forced.py) against a real
decode of the same frames by `ndb eval next-state`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from typer.testing import CliRunner

from dap_server.cli import app
from model_backend.data.build import build_dataset
from model_backend.engine.decoding import Vocabulary
from model_backend.engine.neural import DEFAULT_CHECKPOINT, LoadedModel
from model_backend.eval.next_state import evaluate
from model_backend.eval.teacher_forced import Replay, Scorer, first_records, member_choices, replay
from tests.model_backend.eval.test_next_state_eval import PROGRAMS

pytestmark = pytest.mark.timeout(600)

MEMBER = DEFAULT_CHECKPOINT  # the shipped model: it gets most of these frames right, not all


def test_the_estimate_calls_right_only_frames_the_decode_gets_right(tmp_path: Path) -> None:
    data, vocab, rep = _replayed(tmp_path, seed=5, per_program=4)
    assert rep.transitions and all(t.producible for t in rep.transitions), "the grammar accepts every true frame"
    scores = Scorer(rep, [member_choices(MEMBER, rep, cache=tmp_path / "cache")], vocab).score([1.0])

    errors = tmp_path / "errors.jsonl"
    decoded = evaluate(str(MEMBER), str(data), split="train", progress=False, errors_path=errors)
    wrong = {(e["trajectory"], e["transition"]) for e in map(json.loads, errors.read_text().splitlines())}
    assert len(scores.right) == decoded["transitions"]
    called_right = {key for key, ok in scores.right.items() if ok}
    assert called_right, "a trained member gets some of these frames right"
    assert not called_right & wrong, "a frame the estimate calls right is one greedy decoding writes"
    assert scores.table["all"][0] <= decoded["table"]["all"]["exact"]
    # the cache gives the same numbers back
    again = Scorer(rep, [member_choices(MEMBER, rep, cache=tmp_path / "cache")], vocab).score([1.0])
    assert again.right == scores.right


def test_a_member_of_weight_zero_changes_nothing(tmp_path: Path) -> None:
    _, vocab, rep = _replayed(tmp_path, seed=6, per_program=2)
    trained = member_choices(MEMBER, rep)
    untrained = member_choices(_untrained_model(tmp_path / "untrained"), rep)
    alone = Scorer(rep, [trained], vocab).score([1.0])
    assert Scorer(rep, [trained, untrained], vocab).score([1.0, 0.0]).right == alone.right
    assert Scorer(rep, [untrained, trained], vocab).score([0.0, 2.0]).right == alone.right
    noisy = Scorer(rep, [trained, untrained], vocab).score([1.0, 5.0])  # an untrained model outvoting it
    assert noisy.table["all"][0] < alone.table["all"][0]


def _replayed(tmp_path: Path, seed: int, per_program: int) -> tuple[Path, Vocabulary, Replay]:
    """A small build of PROGRAMS (forward and inverse trajectories) and its replay."""
    data = tmp_path / "data"
    build_dataset(data, seed=seed, n_generated=0, programs=PROGRAMS, traj_per_program=per_program,
                  inverse_fraction=0.4, heldout_fraction=0.0, workers=1, progress=False)
    vocab = LoadedModel.load(MEMBER).vocabulary
    return data, vocab, replay(vocab, first_records(data, "train"))


def _untrained_model(out: Path) -> Path:
    """Random weights of one layer, with the member's vocabulary (the tiny test checkpoints have another)."""
    config = LlamaConfig.from_pretrained(MEMBER)
    config.num_hidden_layers = 1
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(out)
    return out


def test_cli_compares_models_alone_and_in_a_mean(tmp_path: Path) -> None:
    data, _, _ = _replayed(tmp_path, seed=7, per_program=2)
    untrained = _untrained_model(tmp_path / "untrained")
    runner = CliRunner()
    base = ["eval", "teacher-forced", "--data", str(data), "--split", "train", "--cache", str(tmp_path / "cache")]
    result = runner.invoke(app, [*base, "--model", str(MEMBER), "--model", str(untrained),
                                 "--json", str(tmp_path / "rows.json")])
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert [row["weights"] for row in rows] == [[1.0, 0.0], [0.0, 1.0]]
    trained_all, untrained_all = (row["table"]["all"][0] for row in rows)
    assert trained_all > untrained_all  # the shipped model beats random weights on these frames
    assert rows[0]["line"] in result.output
    bad = runner.invoke(app, [*base, "--model", str(MEMBER), "--weights", "1,1"])
    assert bad.exit_code == 2 and "one weight" in bad.output
