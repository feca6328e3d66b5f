"""Trajectories of given program files, written as one shard of a build: an evaluation set of real programs.

    ndb data programs benchmarks/realistic/dev --out data_out/rdev2 --format 2 --header-tokens 512

A build (`build.py`) traces generated programs and keeps those that fit its limits for training (at most
400 events, no value longer than 120 characters). An evaluation set must take the programs as they are:
`program_records` traces each file in the sandbox with the oracle's interactive limits (those of
`ndb eval realistic`), draws `trajectories` trajectories from the one trace as a build draws them (two
forward, one inverse, in turn; a forward one starts at a random call with the sampler's probability),
and writes them as a build writes its records, cut by program views where the header holds
`header_tokens` tokens; such records also carry the whole program (`program_source`), whose facts the
grammar takes as the engines do (`build.facts_program`). The result is one shard, `SPLIT-00000.jsonl` with its stats file, so that every
command that reads a build's split reads it: `ndb eval next-state`, `ndb grammar check`, and the
teacher-forced estimate (`model_backend/eval/teacher_forced.py`).

Nothing here is for training: the realistic benchmark's programs stay out of every build
(`programs.load_realistic_fingerprints`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from model_backend import sampler
from model_backend import trace_format as fmt
from model_backend.data.build import (
    ShardInfo,
    SourceStats,
    SplitStats,
    _shard_name,
    _write_atomic,
    function_id,
    program_id,
    record_text,
    trajectory_records,
)
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace


def program_records(programs: Iterable[Program], trajectories: int, seed: int = 0,
                    version: int = fmt.FORMAT_VERSION, header_tokens: int | None = None,
                    kind: str = "benchmark", unique: bool = True) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(program index, record) for `trajectories` trajectories of each program, drawn from one sandboxed
    trace in trace format `version`; a record per program view (`sampler.training_records`), with the
    build's fields. A program whose trace gives no trajectory yields (index, None) once, so callers can
    count it. With `unique`, a trajectory drawn twice is kept once."""
    for index, program in enumerate(programs):
        result = run_trace(program, Limits(objects=version >= 3))
        rng = random.Random(seed * 1_000_003 + index)
        ids = {"program_id": program_id(program), "function_id": function_id(program), "source_kind": kind}
        if header_tokens is not None:  # the grammar's facts come from the whole program (build.facts_program)
            ids["program_source"] = program.source
        seen: set[str] = set()
        given = False
        for k in range(trajectories):
            inverse = k % 3 == 2
            steps = (sampler.sample_inverse if inverse else sampler.sample_forward)(program, result, rng)
            if len(steps) < 2:
                continue
            parts = sampler.training_records(program, steps, inverse, version, header_tokens)
            for record in trajectory_records(parts, steps, inverse, ids):
                text = record_text(record)
                if unique and text in seen:
                    continue
                seen.add(text)
                given = True
                yield index, record
        if not given:
            yield index, None


def write_program_set(programs: list[Program], out: str | Path, trajectories: int = 8, seed: int = 0,
                      version: int = fmt.FORMAT_VERSION, header_tokens: int | None = None,
                      split: str = "heldout") -> ShardInfo:
    """Write `program_records` of `programs` to OUT/SPLIT-00000.jsonl with its stats file (the build's
    `ShardInfo`), replacing what was there. Returns the shard's info."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = SplitStats(programs=len(programs))
    source = stats.sources.setdefault("benchmark", SourceStats(programs=len(programs)))
    used: set[int] = set()
    lines: list[str] = []
    for index, record in program_records(programs, trajectories, seed, version, header_tokens):
        if record is None:
            stats.skipped["no_trajectory"] = stats.skipped.get("no_trajectory", 0) + 1
            continue
        used.add(index)
        chars = sum(len(text) for text, _ in record["segments"])
        lines.append(json.dumps(record, ensure_ascii=False))
        stats.trajectories += 1
        stats.inverse += record["inverse"]
        stats.transitions += len(record["actions"])
        stats.chars += chars
        stats.trained_chars += sum(len(text) for text, trained in record["segments"] if trained)
        source.trajectories += 1
        source.chars += chars
    stats.used = source.used = len(used)
    name = _shard_name(split, 0)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    _write_atomic(out_dir / f"{name}.jsonl", data)
    info = ShardInfo(name=name, split=split, programs=len(programs), sha256=hashlib.sha256(data).hexdigest(),
                     bytes=len(data), stats=stats)
    _write_atomic(out_dir / f"{name}.stats.json", (info.model_dump_json(indent=2) + "\n").encode())
    settings = {"trajectories": trajectories, "seed": seed, "format_version": version,
                "header_tokens": header_tokens, "programs": [Path(p.path).name for p in programs]}
    _write_atomic(out_dir / "program_set.json", (json.dumps(settings, indent=2) + "\n").encode())
    return info
