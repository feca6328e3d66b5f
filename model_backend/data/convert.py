"""Upgrade a built dataset (and its tokenizer) from trace format 1 to 2 without tracing again.

Format 2 differs from 1 only in the header: the program's lines are numbered (`number_lines`: `<|lineno_sep|>N<|src_sep|>` before each line) and the
version token is `<|format_v2|>`. Frames are unchanged, so each record's header segment is rewritten
and everything else is copied; the result is what `ndb data build` with the same settings writes
under format 2. The tokenizer keeps every id: the version token is renamed in place, so a model
trained on format 1 can continue training on format 2 (`ndb train --init-from`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from model_backend import trace_format as fmt
from model_backend.data.build import MANIFEST, Manifest, ShardInfo, _write_atomic

V1_VERSION = "<|format_v1|>"


class ConvertError(ValueError):
    pass


def convert_header(header: str) -> str:
    """A format-1 header segment (`<|trace_context_start|><|format_v1|>SOURCE[<|entry_sep|>E]<|code_end|>`)
    written in format 2. SOURCE is already escaped text, which is what number_lines takes."""
    prefix = fmt.TRACE_START + V1_VERSION
    if not header.startswith(prefix) or not header.endswith(fmt.CODE_END):
        raise ConvertError(f"not a format-1 header: {header[:60]!r}")
    body = header[len(prefix):-len(fmt.CODE_END)]
    source, sep, entry = body.partition(fmt.ENTRY)
    if "<|" in source or "<|" in entry:
        raise ConvertError(f"unexpected special token inside a header: {header[:60]!r}")
    return fmt.TRACE_START + fmt.VERSION_TOKENS[2] + fmt.number_lines(source) + sep + entry + fmt.CODE_END


def convert_record(record: dict[str, Any]) -> dict[str, Any]:
    segments = record.get("segments")
    if not segments or segments[0][1]:
        raise ConvertError("a record must start with its (untrained) header segment")
    return {**record, "segments": [[convert_header(segments[0][0]), False], *segments[1:]]}


def convert_tokenizer(src: Path, out: Path) -> None:
    """Copy a tokenizer directory, renaming the version token (same id)."""
    out.mkdir(parents=True, exist_ok=True)
    for path in src.iterdir():
        if path.is_dir():
            continue
        if path.suffix == ".json":
            text = path.read_text(encoding="utf-8")
            (out / path.name).write_text(text.replace(V1_VERSION, fmt.VERSION_TOKENS[2]), encoding="utf-8")
        else:
            shutil.copy2(path, out / path.name)


def convert_dataset(src: str | Path, out: str | Path) -> Manifest:
    src, out = Path(src), Path(out)
    manifest = Manifest.model_validate_json((src / MANIFEST).read_text(encoding="utf-8"))
    if manifest.settings.format_version != 1:
        raise ConvertError(f"{src} is format {manifest.settings.format_version}; this converts 1 to 2")
    out.mkdir(parents=True, exist_ok=True)
    shards: list[ShardInfo] = []
    for info in manifest.shards:
        lines = []
        with open(src / f"{info.name}.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    lines.append(json.dumps(convert_record(json.loads(line)), ensure_ascii=False))
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        _write_atomic(out / f"{info.name}.jsonl", data)
        new = info.model_copy(update={"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
        _write_atomic(out / f"{info.name}.stats.json", (new.model_dump_json(indent=2) + "\n").encode())
        shards.append(new)
    settings = manifest.settings.model_copy(update={"format_version": 2})
    upgraded = manifest.model_copy(update={"settings": settings, "shards": shards})
    _write_atomic(out / MANIFEST, (upgraded.model_dump_json(indent=2) + "\n").encode())
    if (src / "build_config.json").exists():
        shutil.copy2(src / "build_config.json", out / "build_config.json")
    if (src / "tokenizer").is_dir():
        convert_tokenizer(src / "tokenizer", out / "tokenizer")
    return upgraded
