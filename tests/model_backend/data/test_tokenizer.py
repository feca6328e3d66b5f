"""The tokenizer trained on a tiny build: special tokens, round trip, segment labels, HF loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.data.build import build_dataset, iter_records, record_text
from model_backend.data.tokenizer import (
    ALL_SPECIAL_TOKENS,
    EOS,
    IGNORE_INDEX,
    PAD,
    encode_segments,
    load_tokenizer,
    train_texts,
    train_tokenizer,
)
from tests.model_backend.data.test_dataset_builder import tiny_programs


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    data = tmp_path_factory.mktemp("tok") / "data"
    build_dataset(data, seed=3, n_generated=0, programs=tiny_programs(), workers=1, heldout_fraction=0.3,
                  traj_per_program=3, progress=False)
    out = data.parent / "tokenizer"
    tok = train_tokenizer(data, vocab_size=512, out_dir=out)
    return data, out, tok


def _records(data: Path) -> list[dict[str, Any]]:
    return list(iter_records(data, "train")) + list(iter_records(data, "heldout"))


def test_saved_in_hf_format_and_loads_offline(trained: tuple[Path, Path, Any]) -> None:
    from transformers import AutoTokenizer

    _, out, tok = trained
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "stats.json"):
        assert (out / name).is_file(), name
    again = AutoTokenizer.from_pretrained(str(out), local_files_only=True)
    assert len(again) == len(tok) <= 512  # a tiny corpus may run out of merges before 512
    assert again.pad_token == PAD and again.eos_token == EOS
    assert again.pad_token_id is not None and again.eos_token_id is not None
    text = record_text(_records(trained[0])[0])
    assert again.encode(text) == tok.encode(text)


def test_every_special_token_is_one_id(trained: tuple[Path, Path, Any]) -> None:
    _, _, tok = trained
    ids = []
    for token in ALL_SPECIAL_TOKENS:
        encoded = tok.encode(token, add_special_tokens=False)
        assert len(encoded) == 1, (token, encoded)
        assert tok.convert_ids_to_tokens(encoded) == [token]
        ids.append(encoded[0])
    assert len(set(ids)) == len(ALL_SPECIAL_TOKENS)
    assert set(fmt.SPECIAL_TOKENS) <= set(tok.all_special_tokens)
    # inside text they are still one id each, and nothing merges across them
    joined = "x" + fmt.FRAME + "1" + fmt.END_OF_FRAME + fmt.ACTION_TOKENS["step_into"] + "y"
    tokens = tok.convert_ids_to_tokens(tok.encode(joined))
    assert fmt.FRAME in tokens and fmt.END_OF_FRAME in tokens and fmt.ACTION_TOKENS["step_into"] in tokens


def test_round_trip_on_shard_text(trained: tuple[Path, Path, Any]) -> None:
    data, _, tok = trained
    records = _records(data)
    assert records
    for record in records:
        text = record_text(record)
        assert tok.decode(tok.encode(text)) == text
    for odd in ["\tλ = 'é漢字🙂'\r\n\x00  \n\n    ", "<|not_a_token|> <| |>", "", "9" * 40 + " -3.5e-7"]:
        assert tok.decode(tok.encode(odd)) == odd


def test_digits_are_single_tokens(trained: tuple[Path, Path, Any]) -> None:
    _, _, tok = trained
    tokens = tok.convert_ids_to_tokens(tok.encode("x = 12345"))
    assert [t for t in tokens if any(c.isdigit() for c in t)] == ["1", "2", "3", "4", "5"]
    assert tok.convert_ids_to_tokens(tok.encode(fmt.LINENO + "17")) == [fmt.LINENO, "1", "7"]


def test_encode_segments_labels(trained: tuple[Path, Path, Any]) -> None:
    data, _, tok = trained
    action_ids = {tok.convert_tokens_to_ids(t) for t in fmt.ACTION_TOKENS.values()}
    stop_ids = {tok.convert_tokens_to_ids(t) for t in fmt.STOP_TOKENS}
    for record in _records(data):
        segments = record["segments"]
        ids, labels = encode_segments(tok, segments)
        assert ids == tok.encode(record_text(record))  # pieces concatenated == whole text
        assert len(ids) == len(labels)
        # walk the pieces: trained pieces carry their ids as labels, the rest -100
        k = 0
        for text, trained_piece in segments:
            n = len(tok.encode(text))
            assert labels[k : k + n] == (ids[k : k + n] if trained_piece else [IGNORE_INDEX] * n)
            k += n
        assert k == len(ids)
        supervised = [i for i, lab in zip(ids, labels, strict=True) if lab != IGNORE_INDEX]
        assert tok.decode(supervised) == "".join(t for t, flag in segments if flag)
        assert not action_ids & set(supervised)  # actions are context
        assert sum(lab in stop_ids for lab in labels) == len(record["actions"])  # each target ends with its stop
        assert labels[0] == IGNORE_INDEX
    ids2, labels2 = encode_segments(tok, segments, add_eos=True)
    assert ids2[-1] == tok.eos_token_id and labels2[-1] == IGNORE_INDEX and ids2[:-1] == ids


def test_trained_on_train_split_only(trained: tuple[Path, Path, Any]) -> None:
    import json

    data, out, _ = trained
    train_chars = sum(len(t) for t in train_texts(data))
    manifest = json.loads((data / "manifest.json").read_text())
    assert train_chars == manifest["splits"]["train"]["chars"]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["splits"]["train"]["chars"] == train_chars
    assert 0 < stats["splits"]["train"]["tokens_per_char"] < 1
    assert stats["splits"]["heldout"]["trajectories"] == manifest["splits"]["heldout"]["trajectories"]


def test_bad_arguments(tmp_path: Path, trained: tuple[Path, Path, Any]) -> None:
    with pytest.raises(ValueError):
        train_tokenizer(trained[0], vocab_size=100, out_dir=tmp_path / "t")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError):
        train_tokenizer(tmp_path / "empty", vocab_size=512, out_dir=tmp_path / "t2")
    assert load_tokenizer(trained[1]).pad_token == PAD
