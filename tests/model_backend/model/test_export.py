"""`ndb export`: a checkpoint's weights (a file or a model directory) as a model directory that loads."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from dap_server.cli import app
from model_backend.engine.neural import LoadedModel

runner = CliRunner()


def _weights(model_dir: Path) -> dict[str, torch.Tensor]:
    return load_file(str(model_dir / "model.safetensors"))


def test_a_run_checkpoint_file_exports_to_a_model_that_loads_with_its_weights(tiny_checkpoint: Path,
                                                                               tmp_path: Path) -> None:
    # A run's last/model.safetensors carries the training wrapper's "model." prefix on every key.
    wrapped = {f"model.{k}": v.clone() for k, v in _weights(tiny_checkpoint).items()}
    save_file(wrapped, str(tmp_path / "model.safetensors"))
    out = tmp_path / "exported"
    result = runner.invoke(app, ["export", str(tmp_path / "model.safetensors"), "--like", str(tiny_checkpoint),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"-> {out}" in result.output
    got, want = _weights(out), _weights(tiny_checkpoint)
    assert set(got) == set(want) and all(torch.equal(got[k], want[k]) for k in want)
    assert LoadedModel.load(out).tokenizer.get_vocab() == LoadedModel.load(tiny_checkpoint).tokenizer.get_vocab()


def test_bfloat16_halves_the_weights(tiny_checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "bf16"
    result = runner.invoke(app, ["export", str(tiny_checkpoint), "--like", str(tiny_checkpoint), "--out", str(out),
                                 "--export-dtype", "bfloat16"])
    assert result.exit_code == 0, result.output
    assert {t.dtype for t in _weights(out).values()} == {torch.bfloat16}


def test_bad_input_is_one_line_and_status_2(tiny_checkpoint: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.safetensors"
    junk.write_text("not weights")
    other_shape = {"model.embed_tokens.weight": torch.zeros(3, 3)}
    save_file(other_shape, str(tmp_path / "small.safetensors"))
    for args in ([str(tmp_path / "missing.safetensors")], [str(junk)], [str(tmp_path / "small.safetensors")],
                 [str(tiny_checkpoint), "--export-dtype", "float8"]):
        result = runner.invoke(app, ["export", *args[:1], "--like", str(tiny_checkpoint), "--out",
                                     str(tmp_path / "out"), *args[1:]])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("\n") == 1 and result.output.startswith("ndb: error:"), result.output
