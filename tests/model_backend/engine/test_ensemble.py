"""Ensembles of checkpoints that share a tokenizer (model_backend/engine/ensemble.py): the combined
distribution, the KV cache per member, the batched worker pass, the refusals, and `ndb ensemble`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from model_backend.engine.base import EngineError
from model_backend.engine.ensemble import EnsembleError, EnsembleLM, EnsembleSpec, make_ensemble
from model_backend.engine.forward import ragged_forward
from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.state import Action
from tests.support.corpus import traced

pytestmark = pytest.mark.timeout(600)


def _other_weights(source: Path, out: Path, seed: int) -> Path:
    """A copy of `source` (same shape and tokenizer) with freshly drawn weights."""
    shutil.copytree(source, out)
    for p in out.glob("*.safetensors*"):
        p.unlink()
    torch.manual_seed(seed)
    LlamaForCausalLM(LlamaConfig.from_pretrained(source)).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def members(tiny_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return tiny_checkpoint, _other_weights(tiny_checkpoint, tmp_path_factory.mktemp("ens") / "random", seed=3)


@pytest.fixture(scope="module")
def ensemble(members: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    out = make_ensemble(list(members), tmp_path_factory.mktemp("made") / "ens", weights=[3.0, 1.0], names=["a", "b"])
    return LoadedModel.load(out)


def test_logits_are_the_weighted_mean_of_the_members_log_probabilities(members: tuple[Path, Path],
                                                                       ensemble: LoadedModel) -> None:
    assert isinstance(ensemble.model, EnsembleLM)
    ids = torch.tensor([[5, 9, 11, 40, 41]])
    with torch.inference_mode():
        got = ensemble.model(input_ids=ids, past_key_values=ensemble.new_cache()).logits[0, -1]
        parts = [LlamaForCausalLM.from_pretrained(str(m))(input_ids=ids).logits[0, -1].log_softmax(-1) for m in members]
    assert torch.allclose(got, 0.75 * parts[0] + 0.25 * parts[1], atol=1e-5)
    assert not torch.allclose(got, parts[0], atol=1e-3)  # the second member counts


def test_engine_steps_on_an_ensemble_and_its_caches_match_a_fresh_encode(ensemble: LoadedModel) -> None:
    program, _ = traced("early_return")
    engine = NeuralEngine(ensemble)
    engine.start(program)
    for kind in ("step_into", "step_over", "step_over", "inv_step_over", "step_return"):
        state = engine.step(Action(kind=kind))  # type: ignore[arg-type]
        assert state.error is None, state.error
    context = list(engine.context_ids)
    assert len(context) == engine._context_len()
    with torch.inference_mode():
        fresh = ensemble.model(input_ids=torch.tensor([context]), past_key_values=ensemble.new_cache()).logits[0, -1]
    assert torch.allclose(fresh, engine.logits(), atol=1e-4)


def test_worker_batched_pass_matches_the_ensemble(ensemble: LoadedModel) -> None:
    a, b = [5, 9, 11, 40, 41], [7, 8]
    with torch.inference_mode():
        ref = [ensemble.model(input_ids=torch.tensor([ids]), past_key_values=ensemble.new_cache()).logits[0, -1]
               for ids in (a, b)]
        caches = [ensemble.new_cache(), ensemble.new_cache()]
        ragged_forward(ensemble.model, [(caches[0], a[:3]), (caches[1], b[:1])])
        out = ragged_forward(ensemble.model, [(caches[0], a[3:]), (caches[1], b[1:])])
    for got, want in zip(out, ref, strict=True):
        assert torch.allclose(got, want, atol=1e-5)


def test_refuses_other_tokenizers_and_bad_descriptions(members: tuple[Path, Path], tmp_path: Path) -> None:
    odd = tmp_path / "odd"
    shutil.copytree(members[1], odd)
    tok = json.loads((odd / "tokenizer.json").read_text())
    tok["added_tokens"][0]["content"] += "x"
    (odd / "tokenizer.json").write_text(json.dumps(tok))
    with pytest.raises(EnsembleError, match="another tokenizer"):
        make_ensemble([members[0], odd], tmp_path / "e1")
    with pytest.raises(EnsembleError, match="at least two"):
        make_ensemble([members[0]], tmp_path / "e2")
    made = make_ensemble(list(members), tmp_path / "e3")
    (made / "ensemble.json").write_text(json.dumps({"members": ["../../etc"], "weights": [1]}))
    with pytest.raises(EnsembleError, match="not a model directory inside"):
        EnsembleSpec.read(made)
    (made / "ensemble.json").write_text("{not json")
    with pytest.raises(EngineError, match="not an ensemble description"):  # the engine's error, not a crash
        LoadedModel.load(made)


def test_cli_ensemble_command(members: tuple[Path, Path], tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from model_backend.model.commands import register

    app = typer.Typer()
    register(app)
    runner = CliRunner()
    ok = runner.invoke(app, ["ensemble", *map(str, members), "--out", str(tmp_path / "e"), "--names", "x,y"])
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "e" / "ensemble.json").read_text()) == {"members": ["x", "y"], "weights": [1.0, 1.0]}
    assert (tmp_path / "e" / "x" / "config.json").is_file() and (tmp_path / "e" / "tokenizer.json").is_file()
    bad = runner.invoke(app, ["ensemble", *map(str, members), "--out", str(tmp_path / "f"), "--weights", "1"])
    assert bad.exit_code == 2 and "one weight" in bad.output


def test_the_shipped_default_loads_and_every_file_stays_under_16_mb() -> None:
    """The repository keeps weight files under 16 MB; the default ensemble names loadable members."""
    from model_backend.engine.ensemble import is_ensemble
    from model_backend.engine.neural import DEFAULT_CHECKPOINT

    sizes = {p: p.stat().st_size for p in DEFAULT_CHECKPOINT.rglob("*") if p.is_file()}
    assert sizes and all(size < 16_000_000 for size in sizes.values()), max(sizes.values())
    if is_ensemble(DEFAULT_CHECKPOINT):
        spec = EnsembleSpec.read(DEFAULT_CHECKPOINT)
        assert len(spec.members) >= 2 and all((m / "README.md").is_file() for m in spec.members)
    assert (DEFAULT_CHECKPOINT / "README.md").is_file()  # the model card
