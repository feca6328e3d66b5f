"""Model shapes and training on tiny configurations (a tiny Llama, a hand-made dataset of a few dozen
records, a few optimizer steps each): loss masking, overfitting, save/load, resume, export, CLI."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokmod = pytest.importorskip("model_backend.data.tokenizer", reason="the tokenizer module (data engineer) is not there yet")
if not hasattr(tokmod, "train_tokenizer") or not hasattr(tokmod, "encode_segments"):
    pytest.skip("model_backend.data.tokenizer has no train_tokenizer / encode_segments yet", allow_module_level=True)

from model_backend import trace_format as fmt  # noqa: E402
from model_backend.model import config as mconfig  # noqa: E402
from model_backend.model import export as mexport  # noqa: E402
from model_backend.model import objective  # noqa: E402
from model_backend.model import train as mtrain  # noqa: E402
from model_backend.model import train_config as tconfig  # noqa: E402
from model_backend.model import train_data as tdata  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
FAST: dict[str, Any] = {"threads": 1, "progress": False, "warmup_steps": 2, "log_every": 1}


def _record(rng: random.Random) -> dict[str, Any]:
    """A trajectory of `y = x + k; return y` in the trace format: context pieces, then trained frames."""
    k, x = rng.randint(1, 9), rng.randint(0, 60)
    code = f"{fmt.TRACE_START}{fmt.VERSION}def f(x):\n    y = x + {k}\n    return y\n{fmt.ENTRY}f({x}){fmt.CODE_END}"
    step = "<|step_into|>"
    return {"segments": [
        [code, False],
        [f'{fmt.FRAME}<|call_sep|>{fmt.LINENO}1{fmt.ARG}{{"x": "{x}"}}{fmt.END_OF_FRAME}', False],
        [step, False],
        [f'{fmt.FRAME}<|line_sep|>{fmt.LINENO}2{fmt.ARG}{{"..": ".."}}{fmt.END_OF_FRAME}', True],
        [step, False],
        [f'{fmt.FRAME}<|line_sep|>{fmt.LINENO}3{fmt.ARG}{{"..": "..", "y": "{x + k}"}}{fmt.END_OF_FRAME}', True],
        [step, False],
        [f'{fmt.FRAME}<|return_sep|>{fmt.LINENO}3{fmt.ARG}"{x + k}"<|exit_normal|>{fmt.TRACE_END}', True],
    ]}


def write_dataset(out: Path, n_train: int = 48, n_heldout: int = 12, seed: int = 0) -> Path:
    """Two train and two held-out shards, each marked complete the way the builder marks them."""
    from model_backend.data.build import ShardInfo, SplitStats

    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("heldout", n_heldout)):
        for k in range(2):
            name = f"{split}-{k:05d}"
            data = "".join(json.dumps(_record(rng)) + "\n" for _ in range(n // 2)).encode()
            (out / f"{name}.jsonl").write_bytes(data)
            info = ShardInfo(name=name, split=split, programs=n // 2, sha256=hashlib.sha256(data).hexdigest(),
                             bytes=len(data), stats=SplitStats())
            (out / f"{name}.stats.json").write_text(info.model_dump_json())
    return out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    data = write_dataset(tmp_path_factory.mktemp("data"))
    tok_dir = data / "tokenizer"
    tokmod.train_tokenizer(data, vocab_size=400, out_dir=tok_dir, measure_stats=False)
    return data, tok_dir


@pytest.fixture(scope="module")
def tokenizer(dataset: tuple[Path, Path]) -> Any:
    return transformers.AutoTokenizer.from_pretrained(str(dataset[1]))


@pytest.fixture(scope="module")
def train_split(dataset: tuple[Path, Path], tokenizer: Any) -> tdata.TokenizedSplit:
    return tdata.tokenize_split(tdata.find_shards(dataset[0], "train"), tokenizer, 1024, progress=False)


# ------------------------------------------------------------------------------------------------ shapes


def test_shapes_fit_vllm_cpu_and_tokenizer(tokenizer: Any) -> None:
    for name, shape in mconfig.SHAPES.items():
        assert shape.head_dim in {32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512}, name
    model = mconfig.build_model("tiny", tokenizer, seed=0)
    cfg = model.config
    assert cfg.vocab_size == len(tokenizer)
    assert cfg.head_dim == 32 and cfg.tie_word_embeddings
    assert cfg.pad_token_id == tokenizer.pad_token_id and cfg.eos_token_id == tokenizer.eos_token_id
    non_embedding = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n)
    assert 80_000 < non_embedding < 130_000
    assert non_embedding == mconfig.SHAPES["tiny"].non_embedding_params()
    small = mconfig.SHAPES["small"].params(len(tokenizer))
    assert 3_000_000 < small < 6_000_000
    with pytest.raises(ValueError, match="unknown model shape"):
        mconfig.make_config("huge", tokenizer)


def test_length_batches_cover_each_example_once_within_budget() -> None:
    lengths = __import__("numpy").random.default_rng(0).integers(5, 300, size=500)
    batches = tdata.length_batches(lengths, batch_tokens=1000, batch_size=None, seed=3, epoch=0, chunk=128)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(500))
    for b in batches:
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 1000
    assert batches == tdata.length_batches(lengths, 1000, None, 3, 0, chunk=128)
    assert batches != tdata.length_batches(lengths, 1000, None, 3, 1, chunk=128)
    fixed = tdata.length_batches(lengths, None, 16, 3, 0)
    assert max(len(b) for b in fixed) == 16


# ------------------------------------------------------------------------------------------------ loss


def test_load_split_tokenizes_shards_in_parallel_and_caches_each(dataset: tuple[Path, Path], tokenizer: Any,
                                                                 train_split: tdata.TokenizedSplit, tmp_path: Path) -> None:
    """Two worker processes give exactly what one pass gives; a shard added later is the only one tokenized."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(dataset[0], data, ignore=shutil.ignore_patterns("tokenizer"))
    cfg = tconfig.TrainConfig(data_dir=str(data), tokenizer_dir=str(dataset[1]), out_dir=str(tmp_path / "run"),
                             max_steps=1, threads=2, progress=False)
    key = tdata.tokenizer_key(dataset[1])
    got = tdata.load_split(cfg, "train", tokenizer, key, is_main=True)
    assert got is not None
    for name in ("ids", "labels", "offsets"):
        assert (getattr(got, name) == getattr(train_split, name)).all(), name
    assert got.stats == train_split.stats
    cache = tmp_path / "run" / tconfig.CACHE
    first = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert len(first) == 2  # one file per shard

    # a third shard, as a data build finishing between two calls of a resumed run would add it
    for suffix in (".jsonl", ".stats.json"):
        shutil.copy(data / f"train-00000{suffix}", data / f"train-00002{suffix}")
    grown = tdata.load_split(cfg, "train", tokenizer, key, is_main=True)
    assert grown is not None and len(grown) == len(train_split) + len(train_split) // 2
    after = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert len(after) == 3 and all(after[name] == mtime for name, mtime in first.items())
    n0 = int(train_split.offsets[len(train_split) // 2])  # the tokens of shard 0, now repeated at the end
    assert (grown.ids[-n0:] == train_split.ids[:n0]).all()


def test_labels_mask_context_and_padding(tokenizer: Any, train_split: tdata.TokenizedSplit) -> None:
    rec = _record(random.Random(7))
    ids, labels = tokmod.encode_segments(tokenizer, rec["segments"])
    trained = sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t, tr in rec["segments"] if tr)
    assert sum(1 for v in labels if v != tdata.IGNORE) == trained

    batch = tdata.collate(train_split, [0, 1, 2], pad_id=tokenizer.pad_token_id)
    pad = batch["attention_mask"] == 0
    assert pad.any(), "the three examples should differ in length"
    assert (batch["labels"][pad] == tdata.IGNORE).all()

    model = mconfig.build_model("tiny", tokenizer, seed=0).eval()
    wrapper = objective.CausalLMLoss(model)
    with torch.no_grad():
        loss_sum, count = wrapper(**batch)
        # our loss (logits only where a label is) is HF's mean loss over the same labels
        hf = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss
        assert torch.allclose(loss_sum / count, hf, atol=1e-5)
        # padding changes nothing: each example alone gives the same summed loss
        alone = [wrapper(**tdata.collate(train_split, [i], tokenizer.pad_token_id)) for i in (0, 1, 2)]
        assert torch.allclose(loss_sum, sum(s for s, _ in alone), rtol=1e-5)
        assert int(count) == sum(int(c) for _, c in alone)
        # the loss ignores context: changing untrained label positions' targets (-100) has no effect,
        # but corrupting a trained target does
        x = tdata.collate(train_split, [0], tokenizer.pad_token_id)
        base, _ = wrapper(**x)
        trained_pos = (x["labels"][0] != tdata.IGNORE).nonzero().flatten()
        bad = {**x, "labels": x["labels"].clone()}
        bad["labels"][0, trained_pos[-1]] = (bad["labels"][0, trained_pos[-1]] + 1) % len(tokenizer)
        assert not torch.allclose(wrapper(**bad)[0], base)


def test_few_steps_overfit_a_repeated_batch(tokenizer: Any, train_split: tdata.TokenizedSplit) -> None:
    torch.manual_seed(0)
    model = mconfig.build_model("tiny", tokenizer, seed=0)
    wrapper = objective.CausalLMLoss(model)
    opt = torch.optim.AdamW(objective.param_groups(model, 0.1), lr=3e-3)
    batch = tdata.collate(train_split, [0, 1, 2, 3], tokenizer.pad_token_id)
    losses = []
    for _ in range(25):
        loss_sum, count = wrapper(**batch)
        loss = loss_sum / count
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0], losses


def test_held_out_check_builds_no_autograd_graph(tokenizer: Any, train_split: tdata.TokenizedSplit) -> None:
    """`evaluate` runs at every --eval-every: its loss must come without a graph (it once kept one)."""
    from accelerate import Accelerator

    wrapper = objective.CausalLMLoss(mconfig.build_model("tiny", tokenizer, seed=0))
    seen: list[bool] = []
    wrapper.register_forward_hook(lambda module, args, output: seen.append(output[0].requires_grad))
    loss = objective.evaluate(wrapper, train_split, [[0, 1], [2, 3]], tokenizer.pad_token_id, Accelerator(cpu=True))
    assert seen == [False, False]
    assert loss > 0 and wrapper.training  # back in training mode afterwards


def test_save_load_round_trip_sharded_identical_logits(tokenizer: Any, tmp_path: Path) -> None:
    model = mconfig.build_model("tiny", tokenizer, seed=1).eval()
    model.save_pretrained(tmp_path, max_shard_size="100KB")
    files = sorted(tmp_path.glob("*.safetensors"))
    assert len(files) > 1  # sharded: an index file points at several weight files
    loaded = transformers.LlamaForCausalLM.from_pretrained(tmp_path).eval()
    assert loaded.lm_head.weight.data_ptr() == loaded.model.embed_tokens.weight.data_ptr()
    x = torch.randint(0, len(tokenizer), (2, 17))
    with torch.no_grad():
        assert torch.equal(model(x).logits, loaded(x).logits)


def test_export_takes_only_tokenizer_files_from_a_model_directory_given_as_tokenizer(tokenizer: Any,
                                                                                      tmp_path: Path) -> None:
    # `--tokenizer` may name a model directory; its weights once came along into the export beside the new ones
    other = _saved_model(tokenizer, tmp_path / "other", seed=2)
    (tmp_path / "other" / "README.md").write_text("the other model's card\n")
    model = mconfig.build_model("tiny", tokenizer, seed=1).eval()
    out = tmp_path / "final"
    files = mexport.export_final(model, tmp_path / "other", out, {}, max_file_bytes=None)
    names = {p.name for p in out.iterdir()}
    assert "README.md" not in names and "tokenizer.json" in names
    assert sorted(out.glob("*.safetensors")) == sorted(files)
    loaded = transformers.LlamaForCausalLM.from_pretrained(out).eval()
    x = torch.randint(0, len(tokenizer), (1, 9))
    with torch.no_grad():
        assert torch.equal(model(x).logits, loaded(x).logits)
        assert not torch.equal(other(x).logits, loaded(x).logits)
    assert tdata.tokenizer_key(tmp_path / "other") == tdata.tokenizer_key(out)


def test_read_weights_reads_the_shards_the_index_names_not_a_stray_file(tokenizer: Any, tmp_path: Path) -> None:
    model = _saved_model(tokenizer, tmp_path / "m", seed=3)  # sharded, with an index
    stray = _saved_model(tokenizer, tmp_path / "stray", seed=4)
    stray.save_pretrained(tmp_path / "one", max_shard_size="1GB")  # one model.safetensors
    shutil.copy2(tmp_path / "one" / "model.safetensors", tmp_path / "m" / "model-99999-of-99999.safetensors")
    weights = mexport.read_weights(tmp_path / "m")
    assert len(weights) >= len(model.state_dict()) - 1  # all but the tied lm_head, saved once
    for name, tensor in model.state_dict().items():
        if name in weights:
            assert torch.equal(weights[name], tensor), name


def test_init_from_a_shallower_model_grows_it_without_changing_its_function(tokenizer: Any, tmp_path: Path) -> None:
    shallow = mconfig.build_model("tiny", tokenizer, seed=1).eval()
    shallow.save_pretrained(tmp_path)
    config = mconfig.make_config("tiny", tokenizer)
    config.num_hidden_layers = 2 * shallow.config.num_hidden_layers
    deep = transformers.LlamaForCausalLM(config).eval()
    assert mexport.load_weights(deep, tmp_path) == shallow.config.num_hidden_layers
    x = torch.randint(0, len(tokenizer), (2, 17))
    with torch.no_grad():
        assert torch.allclose(shallow(x).logits, deep(x).logits, atol=1e-5)  # the copies add nothing yet
    first, copy = deep.model.layers[0], deep.model.layers[1]
    assert torch.equal(copy.self_attn.q_proj.weight, first.self_attn.q_proj.weight)  # trained, not random
    assert not copy.mlp.down_proj.weight.any() and not copy.self_attn.o_proj.weight.any()
    assert copy.mlp.up_proj.weight.data_ptr() != first.mlp.up_proj.weight.data_ptr()  # copies, trained apart
    config.num_hidden_layers = 3
    with pytest.raises(ValueError, match="multiple of 2"):
        mexport.load_weights(transformers.LlamaForCausalLM(config), tmp_path)


def test_schedule_warmup_then_cosine() -> None:
    s = objective.Schedule(1e-3, warmup_steps=10, max_steps=110, min_lr_ratio=0.1, budget_s=None)
    assert s.lr_at(0) == pytest.approx(1e-4) and s.lr_at(9) == pytest.approx(1e-3)
    assert s.lr_at(10) == pytest.approx(1e-3) and s.lr_at(60) == pytest.approx(5.5e-4)
    assert s.lr_at(110) == pytest.approx(1e-4) and s.lr_at(500) == pytest.approx(1e-4)
    timed = objective.Schedule(1e-3, 10, None, 0.1, budget_s=100.0)
    assert timed.lr_at(20, elapsed_s=50.0) == pytest.approx(5.5e-4)  # half the budget: half the cosine


# ------------------------------------------------------------------------------------------------ runs


def test_train_exports_a_loadable_small_checkpoint(dataset: tuple[Path, Path], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data, tok_dir = dataset
    monkeypatch.setattr(mexport, "EXPORT_SHARD_SIZE", "200KB")  # the tiny model then needs several files
    log = mtrain.train(data, tok_dir, tmp_path / "run", "tiny", max_steps=12, batch_size=8, lr=3e-3,
                       eval_every=6, save_every=6, **FAST)
    final = tmp_path / "run" / "final"
    weights = sorted(final.glob("*.safetensors"))
    assert len(weights) >= 2 and all(p.stat().st_size < mexport.MAX_SHARD_BYTES for p in weights)
    assert (final / "model.safetensors.index.json").is_file()
    model = transformers.LlamaForCausalLM.from_pretrained(final)
    assert model.config.vocab_size == len(transformers.AutoTokenizer.from_pretrained(str(final)))
    gen = json.loads((final / "generation_config.json").read_text())
    tok = transformers.AutoTokenizer.from_pretrained(str(final))
    assert tok.convert_tokens_to_ids(fmt.END_OF_FRAME) in gen["eos_token_id"]
    assert tok.convert_tokens_to_ids(fmt.TRACE_END) in gen["eos_token_id"]
    assert (final / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((final / "training_log.json").read_text())
    held = [r["heldout_loss"] for r in saved["records"] if "heldout_loss" in r]
    assert len(held) == 2 and held[-1] < held[0]
    s = log["summary"]
    assert s["steps"] == 12 and s["stop_reason"] == "max_steps"
    assert s["trained_tokens_seen"] < s["tokens_seen"] and s["tokens_per_s"] > 0
    assert saved["records"][-1]["tokens"] == s["tokens_seen"] and "elapsed_s" in saved["records"][-1]
    # the exported weights are the trained ones: the final held-out loss recomputes from the export
    held_split = tdata.tokenize_split(tdata.find_shards(data, "heldout"), tok, 1024, progress=False)
    wrapper = objective.CausalLMLoss(model.eval())
    with torch.no_grad():
        parts = [wrapper(**tdata.collate(held_split, [i], tok.pad_token_id)) for i in range(len(held_split))]
    recomputed = float(sum(s for s, _ in parts) / sum(c for _, c in parts))
    assert recomputed == pytest.approx(s["final_heldout_loss"], rel=1e-4)


def test_interrupted_run_resumes_the_same_schedule(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    data, tok_dir = dataset
    args = {"max_steps": 8, "batch_size": 4, "lr": 3e-3, "save_every": 4, "eval_every": 100, **FAST}
    straight: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "a", "tiny", callback=straight.append, **args)

    class Crash(Exception):
        pass

    def crash_at_6(record: dict[str, Any]) -> None:
        if record["step"] == 6:
            raise Crash

    with pytest.raises(Crash):
        mtrain.train(data, tok_dir, tmp_path / "b", "tiny", callback=crash_at_6, **args)
    assert json.loads((tmp_path / "b" / "last" / tconfig.STATE_FILE).read_text())["step"] == 4
    resumed: list[dict[str, Any]] = []
    log = mtrain.train(data, tok_dir, tmp_path / "b", "tiny", callback=resumed.append, **args)
    assert [r["step"] for r in resumed] == [5, 6, 7, 8]
    assert log["resumed"] == [4]
    for got, want in zip(resumed, straight[4:], strict=True):
        assert got["lr"] == pytest.approx(want["lr"], rel=1e-12)
        assert got["step_loss"] == pytest.approx(want["step_loss"], rel=1e-4)
    a = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "a" / "final")
    b = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "b" / "final")
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-5), name
    # --no-resume starts over
    fresh: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "b", "tiny", callback=fresh.append, **{**args, "max_steps": 2, "resume": False})
    assert [r["step"] for r in fresh] == [1, 2]


@pytest.mark.parametrize("source", ["final", "last"])
def test_init_from_starts_at_another_runs_weights(dataset: tuple[Path, Path], tmp_path: Path, source: str) -> None:
    data, tok_dir = dataset
    args = {"batch_size": 4, "lr": 3e-3, "save_every": 4, "eval_every": 100, **FAST}
    first: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "a", "tiny", max_steps=8, callback=first.append, **args)
    again: list[dict[str, Any]] = []  # same data order (seed), so its first batch is the first run's first
    mtrain.train(data, tok_dir, tmp_path / "b", "tiny", max_steps=1, lr=1e-12, callback=again.append,
                 init_from=str(tmp_path / "a" / source), **{k: v for k, v in args.items() if k != "lr"})
    fresh: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "c", "tiny", max_steps=1, callback=fresh.append, **args)
    assert again[0]["step_loss"] < fresh[0]["step_loss"] - 0.05  # trained weights, not a new init
    a = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "a" / "final")
    b = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "b" / "final")
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-4), name  # an lr of 1e-12 leaves them where they started
    with pytest.raises(ValueError, match="does not fit"):
        mtrain.train(data, tok_dir, tmp_path / "d", "micro", max_steps=1, init_from=str(tmp_path / "a" / "final"), **args)


def test_compiled_training_matches_eager_and_resumes(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    """--compile changes speed, not results: the same losses as eager steps, and its checkpoints keep
    the model's own state-dict keys, so an eager run resumes from them and the export loads."""
    data, tok_dir = dataset
    args = {"batch_size": 4, "lr": 3e-3, "save_every": 3, "eval_every": 100, **FAST}
    eager: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "eager", "tiny", max_steps=6, callback=eager.append, **args)
    compiled: list[dict[str, Any]] = []
    mtrain.train(data, tok_dir, tmp_path / "compiled", "tiny", max_steps=3, callback=compiled.append, compile=True, **args)
    resumed: list[dict[str, Any]] = []
    log = mtrain.train(data, tok_dir, tmp_path / "compiled", "tiny", max_steps=6, callback=resumed.append, **args)
    assert log["resumed"] == [3] and [r["step"] for r in compiled + resumed] == [1, 2, 3, 4, 5, 6]
    for got, want in zip(compiled + resumed, eager, strict=True):
        assert got["step_loss"] == pytest.approx(want["step_loss"], rel=1e-3)
    from safetensors.torch import load_file

    exported = set(load_file(tmp_path / "compiled" / "final" / "model.safetensors"))
    assert exported == set(load_file(tmp_path / "eager" / "final" / "model.safetensors"))


def test_snapshots_are_loadable_exports_of_the_weights_at_their_step(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    data, tok_dir = dataset
    mtrain.train(data, tok_dir, tmp_path / "run", "tiny", max_steps=4, batch_size=4, lr=3e-3, save_every=100,
                 eval_every=100, snapshot_every=2, **FAST)
    snapshots = tmp_path / "run" / tconfig.SNAPSHOTS
    assert sorted(p.name for p in snapshots.iterdir()) == ["step-000002", "step-000004"]
    final = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "run" / "final")
    at_4 = transformers.LlamaForCausalLM.from_pretrained(snapshots / "step-000004")
    at_2 = transformers.LlamaForCausalLM.from_pretrained(snapshots / "step-000002")
    for (name, pf), (_, p4) in zip(final.named_parameters(), at_4.named_parameters(), strict=True):
        assert torch.equal(pf, p4), name
    assert any(not torch.equal(pf, p2) for pf, p2 in zip(final.parameters(), at_2.parameters(), strict=True))
    assert json.loads((snapshots / "step-000002" / "training_log.json").read_text())["snapshot_step"] == 2
    assert (snapshots / "step-000002" / "tokenizer.json").is_file()
    with pytest.raises(ValueError, match="snapshot_every"):
        mtrain.train(data, tok_dir, tmp_path / "bad", "tiny", max_steps=1, snapshot_every=-1, **FAST)


def test_time_budget_stops_cleanly(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    data, tok_dir = dataset
    log = mtrain.train(data, tok_dir, tmp_path / "run", "tiny", time_budget_minutes=0.03, batch_size=4,
                       save_every=1000, eval_every=1000, **FAST)
    assert log["summary"]["stop_reason"] == "time_budget"
    assert (tmp_path / "run" / "final" / "config.json").is_file()
    assert (tmp_path / "run" / "last" / tconfig.STATE_FILE).is_file()


def test_cli_train_command(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from model_backend.model.commands import register

    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:  # keep `train` a sub-command
        pass

    data, tok_dir = dataset
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--data", str(data), "--out", str(tmp_path / "run"), "--model", "tiny",
                                 "--max-steps", "3", "--batch-size", "4", "--threads", "1", "--warmup", "1",
                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "3 steps (max_steps)" in result.output
    assert (tmp_path / "run" / "final" / "training_log.json").is_file()
    bad = runner.invoke(app, ["train", "--data", str(data), "--out", str(tmp_path / "x"), "--model", "huge", "--max-steps", "1"])
    assert bad.exit_code == 2 and "unknown --model" in bad.output
    none = runner.invoke(app, ["train", "--data", str(data), "--out", str(tmp_path / "x")])
    assert none.exit_code == 2 and "--max-steps" in none.output


# ----------------------------------------------------------------------------------------------- average


def _saved_model(tokenizer: Any, path: Path, seed: int, layers: int | None = None) -> Any:
    config = mconfig.make_config("tiny", tokenizer)
    if layers is not None:
        config.num_hidden_layers = layers
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(config).eval()
    model.save_pretrained(path, max_shard_size="100KB")
    tokenizer.save_pretrained(path)
    return model


def test_average_writes_the_weighted_mean_of_its_sources(tokenizer: Any, tmp_path: Path) -> None:
    from model_backend.model.average import average_checkpoints

    a = _saved_model(tokenizer, tmp_path / "a", seed=1)
    b = _saved_model(tokenizer, tmp_path / "b", seed=2)
    record = average_checkpoints([tmp_path / "a", tmp_path / "b"], tmp_path / "mean", weights=[3.0, 1.0])
    mean = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "mean").eval()
    for (name, pa), pb, pm in zip(a.named_parameters(), b.parameters(), mean.parameters(), strict=True):
        assert torch.allclose(pm, 0.75 * pa + 0.25 * pb, atol=1e-6), name
    assert mean.lm_head.weight.data_ptr() == mean.model.embed_tokens.weight.data_ptr()
    assert transformers.AutoTokenizer.from_pretrained(str(tmp_path / "mean")).get_vocab() == tokenizer.get_vocab()
    saved = json.loads((tmp_path / "mean" / "average.json").read_text())
    assert saved == record and [s["weight"] for s in saved["sources"]] == [3.0, 1.0]
    assert all(p.stat().st_size < mexport.MAX_SHARD_BYTES for p in (tmp_path / "mean").glob("*.safetensors"))


def test_average_refuses_other_shapes_and_tokenizers(tokenizer: Any, tmp_path: Path) -> None:
    from model_backend.model.average import AverageError, average_checkpoints

    _saved_model(tokenizer, tmp_path / "a", seed=1)
    _saved_model(tokenizer, tmp_path / "deeper", seed=2, layers=4)
    with pytest.raises(AverageError, match="another shape"):
        average_checkpoints([tmp_path / "a", tmp_path / "deeper"], tmp_path / "out")
    _saved_model(tokenizer, tmp_path / "b", seed=2)
    tok = json.loads((tmp_path / "b" / "tokenizer.json").read_text())
    tok["added_tokens"][0]["content"] = "<|other|>"
    (tmp_path / "b" / "tokenizer.json").write_text(json.dumps(tok))
    with pytest.raises(AverageError, match="another tokenizer"):
        average_checkpoints([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    with pytest.raises(AverageError, match="at least two"):
        average_checkpoints([tmp_path / "a"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_average_command(tokenizer: Any, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from model_backend.model.commands import register

    app = typer.Typer()
    register(app)
    for name, seed in (("a", 1), ("b", 2)):
        _saved_model(tokenizer, tmp_path / name, seed=seed)
    runner = CliRunner()
    ok = runner.invoke(app, ["average", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")])
    assert ok.exit_code == 0, ok.output
    assert "model in" in ok.output and (tmp_path / "m" / "config.json").is_file()
    bad = runner.invoke(app, ["average", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "x"),
                              "--weights", "1,x"])
    assert bad.exit_code == 2 and "--weights" in bad.output
    missing = runner.invoke(app, ["average", str(tmp_path / "a"), str(tmp_path / "nope"), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "config.json" in missing.output
