"""The dataset builder: programs -> sandboxed traces -> sampled trajectories -> sharded JSONL.

`build_dataset(out_dir, seed, n_generated)`:

1. takes the programs of `model_backend.data.programs.all_programs(seed, n_generated)` (deterministic
   per seed) and drops exact duplicates (same source and entry);
2. splits them BY FUNCTION: a stable hash of the normalized definitions (`function_key`: the
   module's top-level defs and classes, unparsed, so comments, blank lines and the driver code that
   calls them do not count) decides train or held-out. All entries (inputs) of one function share a
   split, and the split of a function does not depend on the seed or on the other programs;
3. assigns each split's programs to shards, a fixed, seeded permutation cut into chunks of
   `shard_size // traj_per_program` programs;
4. traces every program of every unfinished shard in the sandbox, in parallel (a process pool, results
   taken in order), and keeps a trace by `programs.keep_runnable`'s criteria (`usable`: a normal end or
   one of the program's intended exceptions, 3 to 400 events, no value longer than 120 characters),
   so each program is traced once;
5. samples `traj_per_program` trajectories per kept program (inverse with probability
   `inverse_fraction`) with `random.Random(program_seed(seed, index))`; a trajectory whose text is
   longer than `max_chars` is sampled again with half the steps, and dropped at one step; one drawn
   twice for the same program is kept once;
6. writes each shard to `<name>.jsonl.tmp`, renames it to `<name>.jsonl`, then writes its statistics to
   `<name>.stats.json`: that file marks the shard complete. A rerun skips complete shards, so an
   interrupted build loses no finished shard. `manifest.json` sums the shards' statistics.

Same seed, same programs and same settings -> byte-identical shards, whatever the number of workers.
One record (one JSON line) per trajectory:
    {"program_id", "function_id", "source_kind", "inverse", "segments": [[text, trained], ...],
     "actions": ["step_into", "breakpoint:7", ...], "horizons": [int per transition]}
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import multiprocessing
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from model_backend import sampler
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import TraceResult
from model_backend.trace_format import FORMAT_VERSION

SPLITS = ("train", "heldout")
BUILD_VERSION = 3  # bump when the record layout or the sampling procedure changes (2: sub_trace fix;
# 3: a program's trajectory drawn twice is kept once, and SamplerConfig.input_jump_prob)
MANIFEST = "manifest.json"
CONFIG = "build_config.json"
#: Which traces are kept (as `programs.keep_runnable`): event count range and longest value repr.
MIN_EVENTS, MAX_EVENTS, MAX_VALUE_LEN = 3, 400, 120
#: Tracing limits for data: tighter than an interactive session; one event more than MAX_EVENTS.
DATA_LIMITS = Limits(wall_time=5.0, cpu_time=5, memory_mb=1024, max_events=MAX_EVENTS + 1)


class BuildError(RuntimeError):
    """The output directory cannot be used as asked (e.g. it holds a build with other settings)."""


# ------------------------------------------------------------------------------------------ statistics


class SourceStats(BaseModel):
    programs: int = 0  # programs of this source assigned to the split
    used: int = 0  # programs that gave at least one trajectory
    trajectories: int = 0
    chars: int = 0


class SplitStats(BaseModel):
    programs: int = 0  # programs assigned (after removing duplicates)
    used: int = 0  # programs that gave at least one trajectory
    skipped: dict[str, int] = Field(default_factory=dict)  # reason -> programs
    trajectories: int = 0
    inverse: int = 0  # inverse trajectories among them
    dropped_trajectories: int = 0  # too long even with one step, no transition, or drawn twice
    transitions: int = 0  # actions, i.e. predicted frames
    chars: int = 0  # all text
    trained_chars: int = 0  # text of the trained pieces (the predicted frames)
    sources: dict[str, SourceStats] = Field(default_factory=dict)  # origin (e.g. "gen:plain") -> stats
    errors: list[str] = Field(default_factory=list)  # the first few unexpected failures, for diagnosis

    def add(self, other: SplitStats) -> None:
        for name in ("programs", "used", "trajectories", "inverse", "dropped_trajectories", "transitions",
                     "chars", "trained_chars"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n
        for kind, s in other.sources.items():
            mine = self.sources.setdefault(kind, SourceStats())
            for name in ("programs", "used", "trajectories", "chars"):
                setattr(mine, name, getattr(mine, name) + getattr(s, name))
        self.errors = (self.errors + other.errors)[:20]
        self.skipped = dict(sorted(self.skipped.items()))
        self.sources = dict(sorted(self.sources.items()))


class ShardInfo(BaseModel):
    name: str  # e.g. "train-00003"; the file is name + ".jsonl"
    split: str
    programs: int
    sha256: str
    bytes: int
    stats: SplitStats


class BuildSettings(BaseModel):
    seed: int
    n_generated: int
    traj_per_program: int
    inverse_fraction: float
    heldout_fraction: float
    shard_size: int
    max_chars: int
    sampler: dict[str, Any]
    limits: dict[str, Any]
    format_version: int = FORMAT_VERSION
    header_tokens: int | None = None  # the program view's budget (None: every header shows the whole program)
    build_version: int = BUILD_VERSION
    keep: dict[str, int] = Field(default_factory=lambda: {
        "min_events": MIN_EVENTS, "max_events": MAX_EVENTS, "max_value_len": MAX_VALUE_LEN})
    real_code: bool = True
    programs_fingerprint: str = ""  # sha256 over the program ids, in order


class Manifest(BaseModel):
    settings: BuildSettings
    splits: dict[str, SplitStats]
    sources: dict[str, int]  # top-level source kind (e.g. "gen", "script", "humaneval") -> programs used
    duplicates: int  # programs removed as exact duplicates before splitting
    shards: list[ShardInfo]
    built: list[str]  # shards written by this run
    reused: list[str]  # complete shards found and kept
    elapsed_s: float  # this run

    @property
    def seed(self) -> int:
        return self.settings.seed

    def shard_paths(self, out_dir: str | Path, split: str = "train") -> list[Path]:
        return [Path(out_dir) / f"{s.name}.jsonl" for s in self.shards if s.split == split]


# ------------------------------------------------------------------------------------------ identities


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def function_key(source: str) -> str:
    """The normalized code of a program's functions: its top-level defs and classes (the whole module
    when it has none), normalized by `programs.normalize_code` (docstrings dropped, bound names renamed
    v0, v1, ..., formatting and comments gone). Module-level driver code does not count, so every
    input of a function, and every renaming of it, gets the same key."""
    from model_backend.data.programs import normalize_code

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return re.sub(r"\s+", " ", source).strip()
    defs: list[ast.stmt] = [
        n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    try:
        return normalize_code(ast.unparse(ast.Module(body=defs or tree.body, type_ignores=[])))
    except (SyntaxError, ValueError, RecursionError):
        return ast.unparse(tree)


def function_id(program: Program) -> str:
    return _sha("function:" + function_key(program.source))[:16]


def program_id(program: Program) -> str:
    return _sha(f"program:{program.source}\0{program.entry}")[:16]


def split_of(function_key_text: str, heldout_fraction: float) -> str:
    """train or heldout, from a stable hash of the normalized function code (no seed: a function held
    out in one build is held out in every build with the same fraction)."""
    bucket = int(_sha("split:" + function_key_text)[:15], 16) / 16**15
    return "heldout" if bucket < heldout_fraction else "train"


def program_seed(seed: int, index: int) -> int:
    """The sampling seed of program `index` of the build's program list."""
    return int(_sha(f"sample:{seed}:{index}")[:16], 16)


def source_kind(program: Program) -> str:
    """Where a program came from: the generators' `origin` (e.g. "gen:plain", "script:entry",
    "humaneval"), else a kind guessed from its path, else "program"."""
    for attr in ("origin", "source_kind", "kind"):
        value = getattr(program, attr, None)
        if isinstance(value, str) and value:
            return value
    m = re.match(r"<([a-z_]+)", program.path)
    return m.group(1) if m else "program"


def top_kind(kind: str) -> str:
    return kind.split(":", 1)[0]


# ------------------------------------------------------------------------------------------ the work


class _Task(BaseModel):
    index: int  # position in the program list (seeds the sampling)
    program: Program
    program_id: str
    function_id: str
    kind: str
    expect_errors: tuple[str, ...] = ()


class _Outcome(BaseModel):
    skipped: str | None = None  # reason when the program gave no trajectory
    error: str | None = None
    records: list[str] = Field(default_factory=list)  # JSON lines
    inverse: int = 0
    dropped: int = 0
    transitions: int = 0
    chars: int = 0
    trained_chars: int = 0


def usable(expect_errors: Sequence[str], result: TraceResult, max_events: int = MAX_EVENTS,
           max_value_len: int = MAX_VALUE_LEN) -> str | None:
    """Why a trace is not used for training, or None when it is. The criteria of
    `programs.keep_runnable` (normal end or an intended exception, MIN_EVENTS..`max_events` events, no
    value longer than `max_value_len`), applied to the trace the build records anyway, so that each
    program is traced once."""
    n = len(result.events)
    if result.truncated:
        return "too_many_events"
    if result.exit == "never":
        return "no_end_within_limits"
    if result.exit == "error":
        name = (result.exit_reason or "").split(":", 1)[0].strip()
        if name not in expect_errors:
            return "unexpected_error"
    if n < MIN_EVENTS:
        return "too_few_events"
    if n > max_events:
        return "too_many_events"
    for ev in result.events:
        if len(ev.value or "") > max_value_len or any(len(v) > max_value_len for v in ev.locals.values()):
            return "long_value"
    return None


def _trajectory(
    task: _Task, result: TraceResult, rng: random.Random, inverse: bool, settings: BuildSettings
) -> list[dict[str, Any]] | None:
    """One trajectory's records (several when program views cut it, `sampler.training_records`), or
    None when no trajectory of at least one transition fits in max_chars."""
    max_steps = sampler.SamplerConfig(**settings.sampler).max_steps
    while max_steps >= 1:
        config = sampler.SamplerConfig(**{**settings.sampler, "max_steps": max_steps})
        sample = sampler.sample_inverse if inverse else sampler.sample_forward
        steps = sample(task.program, result, rng, config)
        if len(steps) < 2:
            return None  # e.g. an inverse trajectory that starts at the first state
        program = task.program
        if inverse and program.entry and sampler.hides_inputs(steps):
            program = program.model_copy(update={"entry": sampler.hidden_entry(program.entry)})
        parts = sampler.training_records(program, steps, inverse, settings.format_version, settings.header_tokens)
        if parts and all(sum(len(text) for text, _ in segments) <= settings.max_chars for segments in parts):
            ids = {"program_id": task.program_id, "function_id": task.function_id, "source_kind": task.kind}
            if settings.header_tokens is not None:  # the grammar's facts come from the whole program (facts_program)
                ids["program_source"] = program.source
            return trajectory_records(parts, steps, inverse, ids)
        max_steps //= 2
    return None


def trajectory_records(parts: list[list[tuple[str, bool]]], steps: sampler.Steps, inverse: bool,
                       ids: dict[str, str]) -> list[dict[str, Any]]:
    """The records of one trajectory cut into `parts` (`sampler.training_records`): `ids` (program_id,
    function_id, source_kind), then each part's segments with the actions and horizons of its trained
    frames."""
    actions = [str(action) for _, action in steps if action is not None]
    horizons = [sampler.horizon(steps[i][0], steps[i + 1][0]) for i in range(len(steps) - 1)]
    records, offset = [], 0
    for segments in parts:
        k = sum(trained for _, trained in segments)  # one trained frame per action taken
        records.append({
            **ids, "inverse": inverse,
            "segments": [[text, trained] for text, trained in segments],
            "actions": actions[offset:offset + k],
            "horizons": horizons[offset:offset + k],
        })
        offset += k
    return records


def process_program(task: _Task, settings: BuildSettings) -> _Outcome:
    """Trace one program and sample its trajectories. Never raises: failures become `skipped`."""
    try:
        result = run_trace(task.program, Limits(**settings.limits))
    except Exception as exc:  # the sandbox itself failed (e.g. no processes left)
        return _Outcome(skipped="sandbox_failure", error=f"{task.program_id}: {type(exc).__name__}: {exc}")
    reason = usable(task.expect_errors, result, settings.keep["max_events"], settings.keep["max_value_len"])
    if reason is not None:
        return _Outcome(skipped=reason)
    outcome = _Outcome()
    rng = random.Random(program_seed(settings.seed, task.index))
    try:
        for _ in range(settings.traj_per_program):
            inverse = rng.random() < settings.inverse_fraction
            records = _trajectory(task, result, rng, inverse, settings)
            lines = [json.dumps(record, ensure_ascii=False) for record in records or []]
            if not lines or lines[0] in outcome.records:  # none fits, or drawn before (an input jump is one per trace)
                outcome.dropped += 1
                continue
            outcome.inverse += inverse
            for line, record in zip(lines, records or [], strict=True):
                outcome.records.append(line)
                outcome.transitions += len(record["actions"])
                outcome.chars += sum(len(t) for t, _ in record["segments"])
                outcome.trained_chars += sum(len(t) for t, trained in record["segments"] if trained)
    except Exception as exc:  # a sampler or serializer bug on an odd trace: report it, skip the program
        return _Outcome(skipped="sampling_error", error=f"{task.program_id}: {type(exc).__name__}: {exc}")
    if not outcome.records:
        outcome.skipped = "no_trajectory"
    return outcome


_WORKER_SETTINGS: BuildSettings | None = None


def _init_worker(settings: BuildSettings) -> None:
    global _WORKER_SETTINGS
    _WORKER_SETTINGS = settings


def _work(task: _Task) -> _Outcome:
    assert _WORKER_SETTINGS is not None
    return process_program(task, _WORKER_SETTINGS)


# ------------------------------------------------------------------------------------------ shards


def _shard_name(split: str, k: int) -> str:
    return f"{split}-{k:05d}"


def _assign_shards(tasks: list[_Task], splits: list[str], seed: int, per_shard: int) -> dict[str, list[_Task]]:
    """A fixed, seeded assignment: each split's programs permuted, then cut into chunks."""
    shards: dict[str, list[_Task]] = {}
    for split in SPLITS:
        members = [t for t, s in zip(tasks, splits, strict=True) if s == split]
        random.Random(f"shards:{seed}:{split}").shuffle(members)
        for k in range(math.ceil(len(members) / per_shard)):
            shards[_shard_name(split, k)] = members[k * per_shard : (k + 1) * per_shard]
    return shards


def _complete(out: Path, name: str) -> ShardInfo | None:
    """The shard's statistics when the shard is complete (its data file and its stats file exist and
    agree in size), else None."""
    data, stats = out / f"{name}.jsonl", out / f"{name}.stats.json"
    if not (data.is_file() and stats.is_file()):
        return None
    try:
        info = ShardInfo.model_validate_json(stats.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return info if info.bytes == data.stat().st_size else None


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _check_config(out: Path, settings: BuildSettings) -> None:
    path = out / CONFIG
    if path.is_file():
        try:
            old = BuildSettings.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            old = None
        if old != settings:
            raise BuildError(
                f"{out} holds a build with other settings or other programs ({path}); "
                "use a new output directory or delete the old one"
            )
    else:
        _write_atomic(path, (settings.model_dump_json(indent=2) + "\n").encode())


def _results(
    tasks: list[_Task], settings: BuildSettings, workers: int
) -> Iterator[_Outcome]:
    if workers <= 1:
        for task in tasks:
            yield process_program(task, settings)
        return
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with ctx.Pool(workers, initializer=_init_worker, initargs=(settings,), maxtasksperchild=500) as pool:
        yield from pool.imap(_work, tasks, chunksize=4)


def _load_programs(seed: int, n_generated: int, real_code: bool) -> list[Program]:
    from model_backend.data import programs as sources

    if real_code:
        return list(sources.all_programs(seed=seed, n_generated=n_generated))
    return list(sources.all_programs(seed=seed, n_generated=n_generated, humaneval=False, algorithms=False))


def build_dataset(
    out_dir: str | Path,
    seed: int,
    n_generated: int,
    traj_per_program: int = 4,
    inverse_fraction: float = 0.35,
    heldout_fraction: float = 0.05,
    workers: int = 2,
    shard_size: int = 2000,
    max_chars: int = 6000,
    progress: bool = True,
    real_code: bool = True,
    programs: Sequence[Program] | None = None,
    sampler_config: sampler.SamplerConfig | None = None,
    limits: Limits | None = None,
    format_version: int = FORMAT_VERSION,
    header_tokens: int | None = None,
    max_events: int = MAX_EVENTS,
    max_value_len: int = MAX_VALUE_LEN,
) -> Manifest:
    """Build (or finish building) the dataset in `out_dir`; see the module docstring.

    `shard_size` is the target number of trajectories per shard: each shard gets
    `max(1, shard_size // traj_per_program)` programs. `programs` replaces `all_programs(seed,
    n_generated)` (tests, custom corpora); `real_code=False` leaves out HumanEval and `algorithms`.
    Workers <= 1 trace in this process. `format_version` 2 writes objects as Python does (for models
    that read format 2); `header_tokens` turns on program views for programs longer than that.
    `max_events` and `max_value_len` are the keep criteria (`usable`): a program whose trace runs longer,
    or shows a longer value, is left out. Raised for realistic programs, they keep the long runs and the
    long (cut) values that real programs show; the default limits trace one event past `max_events`.
    """
    start = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    program_list = list(programs) if programs is not None else _load_programs(seed, n_generated, real_code)

    # identities, duplicates, split
    tasks: list[_Task] = []
    splits: list[str] = []
    seen: set[str] = set()
    duplicates = 0
    for index, program in enumerate(program_list):
        pid = program_id(program)
        if pid in seen:
            duplicates += 1
            continue
        seen.add(pid)
        key = function_key(program.source)
        tasks.append(_Task(
            index=index, program=Program(source=program.source, path=program.path, entry=program.entry),
            program_id=pid, function_id=_sha("function:" + key)[:16], kind=source_kind(program),
            expect_errors=tuple(getattr(program, "expect_errors", ()) or ()),
        ))
        splits.append(split_of(key, heldout_fraction))

    sampler_cfg = sampler_config or sampler.SamplerConfig()
    limits = (limits or DATA_LIMITS.model_copy(update={"max_events": max_events + 1})).model_copy(
        update={"objects": format_version >= 3})
    sampler_dict = {k: getattr(sampler_cfg, k) for k in sampler_cfg.__dataclass_fields__}
    settings = BuildSettings(
        seed=seed, n_generated=n_generated, traj_per_program=traj_per_program,
        inverse_fraction=inverse_fraction, heldout_fraction=heldout_fraction, shard_size=shard_size,
        max_chars=max_chars, sampler=sampler_dict, limits=limits.model_dump(), real_code=real_code,
        format_version=format_version, header_tokens=header_tokens,
        keep={"min_events": MIN_EVENTS, "max_events": max_events, "max_value_len": max_value_len},
        programs_fingerprint=_sha("\n".join(t.program_id for t in tasks)),
    )
    _check_config(out, settings)

    per_shard = max(1, shard_size // max(1, traj_per_program))
    shards = _assign_shards(tasks, splits, seed, per_shard)
    infos: dict[str, ShardInfo] = {}
    todo: list[str] = []
    for name in shards:
        info = _complete(out, name)
        if info is None:
            todo.append(name)
        else:
            infos[name] = info

    queue = [task for name in todo for task in shards[name]]
    from tqdm import tqdm

    bar = tqdm(total=len(queue), disable=not progress, unit="prog", desc=f"data {out.name}", smoothing=0.05)
    try:
        results = _results(queue, settings, workers)
        for name in todo:
            infos[name] = _write_shard(out, name, shards[name], results, bar)
    finally:
        bar.close()

    total: dict[str, SplitStats] = {split: SplitStats() for split in SPLITS}
    ordered = [infos[name] for name in shards]
    for info in ordered:
        total[info.split].add(info.stats)
    used_kinds: dict[str, int] = {}
    for split_stats in total.values():
        for kind, s in split_stats.sources.items():
            used_kinds[top_kind(kind)] = used_kinds.get(top_kind(kind), 0) + s.used
    manifest = Manifest(
        settings=settings, splits=total, sources=dict(sorted(used_kinds.items())), duplicates=duplicates,
        shards=ordered, built=todo, reused=[n for n in shards if n not in todo],
        elapsed_s=round(time.monotonic() - start, 2),
    )
    _write_atomic(out / MANIFEST, (manifest.model_dump_json(indent=2) + "\n").encode())
    return manifest


def _write_shard(out: Path, name: str, tasks: list[_Task], results: Iterator[_Outcome], bar: Any) -> ShardInfo:
    split = name.rsplit("-", 1)[0]
    stats = SplitStats(programs=len(tasks))
    lines: list[str] = []
    for task in tasks:
        outcome = next(results)
        bar.update(1)
        src = stats.sources.setdefault(task.kind, SourceStats())
        src.programs += 1
        if outcome.error:
            stats.errors = (stats.errors + [outcome.error])[:20]
        stats.dropped_trajectories += outcome.dropped
        if outcome.skipped:
            stats.skipped[outcome.skipped] = stats.skipped.get(outcome.skipped, 0) + 1
            continue
        lines.extend(outcome.records)
        stats.used += 1
        src.used += 1
        src.trajectories += len(outcome.records)
        src.chars += outcome.chars
        stats.trajectories += len(outcome.records)
        stats.inverse += outcome.inverse
        stats.transitions += outcome.transitions
        stats.chars += outcome.chars
        stats.trained_chars += outcome.trained_chars
    stats.skipped = dict(sorted(stats.skipped.items()))
    stats.sources = dict(sorted(stats.sources.items()))
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    _write_atomic(out / f"{name}.jsonl", data)
    info = ShardInfo(name=name, split=split, programs=len(tasks), sha256=hashlib.sha256(data).hexdigest(),
                     bytes=len(data), stats=stats)
    _write_atomic(out / f"{name}.stats.json", (info.model_dump_json(indent=2) + "\n").encode())
    return info


# ------------------------------------------------------------------------------------------ reading


def shard_files(data_dir: str | Path, split: str = "train") -> list[Path]:
    """The complete shards of one split, in name order."""
    out = Path(data_dir)
    return [p for p in sorted(out.glob(f"{split}-*.jsonl")) if _complete(out, p.name[: -len(".jsonl")])]


def iter_records(data_dir: str | Path, split: str = "train") -> Iterator[dict[str, Any]]:
    """Every trajectory record of one split, shard by shard."""
    for path in shard_files(data_dir, split):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)


def record_text(record: dict[str, Any]) -> str:
    return "".join(text for text, _ in record["segments"])


def facts_program(record: dict[str, Any], header_program: Program) -> Program:
    """The program whose facts the grammar takes for a record, as the engines take them from the whole
    program: the record's `program_source` where it has one (records whose headers show program views: a
    build with `header_tokens`, a program set of `from_programs`),
    else the program its header shows (whole, unless a build's view cut it)."""
    source = record.get("program_source")
    if not isinstance(source, str):
        return header_program
    return header_program.model_copy(update={"source": source})
