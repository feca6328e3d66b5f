"""Next-state accuracy on held-out trajectories (teacher forcing).

For each transition of a held-out trajectory the model sees the true trajectory so far and the
action, predicts the next frame under the grammar, and the prediction is compared with the truth:
exactly (the whole state) and per component (event, line, locals, value). Results are broken down
by action, by horizon (how many recorded events the action moved over) and by program source (gen,
script, humaneval, algorithms; alone and for step_into + step_over, the first bar). `--errors FILE`
writes every wrong prediction, field by field against the truth, for reading what the model gets wrong.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from model_backend import trace_format as fmt
from model_backend.data.build import facts_program, iter_records, record_text, top_kind
from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.grammar import ProgramFacts
from model_backend.program import Program
from model_backend.state import Action, State

COMPONENTS = ("event", "line", "locals", "value")
STATE_FIELDS = ("event", "line", "function", "locals", "value", "stack", "exit")  # all equal = an exact prediction


BAR_ACTIONS = ("step_into", "step_over")


def horizon_bucket(h: int) -> str:
    for upper, name in ((1, "1"), (2, "2"), (4, "3-4"), (8, "5-8"), (16, "9-16")):
        if h <= upper:
            return name
    return ">16"


def compare(predicted: State | None, truth: State) -> dict[str, bool]:
    if predicted is None or predicted.error is not None:
        return {"exact": False, **{c: False for c in COMPONENTS}}
    result = {c: getattr(predicted, c) == getattr(truth, c) for c in COMPONENTS}
    result["exact"] = all(getattr(predicted, f) == getattr(truth, f) for f in STATE_FIELDS)
    return result


def describe_error(predicted: State | None, truth: State) -> dict[str, Any]:
    """The fields where a wrong prediction differs from the truth: [truth, predicted] per field,
    per variable for locals (a missing variable is null on its side)."""
    if predicted is None or predicted.error is not None:
        return {"failed": predicted.error if predicted is not None else "unparsable frame"}
    diff: dict[str, Any] = {}
    for field in STATE_FIELDS:
        want, got = getattr(truth, field), getattr(predicted, field)
        if want == got:
            continue
        if field == "locals":
            diff[field] = {n: [want.get(n), got.get(n)] for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)}
        elif field == "stack":
            diff[field] = [[f"{frame.function}:{frame.line}" for frame in stack] for stack in (want, got)]
        else:
            diff[field] = [want, got]
    return diff


def predict_teacher_forced(engine: NeuralEngine, program: Program, steps: list[tuple[State, Action | None]], inverse: bool,
                           speed: dict[str, float] | None = None, whole: Program | None = None) -> list[State | None]:
    """The model's prediction for each transition, given the true trajectory before it. `speed`, when
    given, accumulates "tokens" (frame tokens fed while generating, forced ones included) and "seconds".
    `whole`: the whole program where `program` is a view of it (the grammar's facts come from it)."""
    predictions: list[State | None] = []
    with torch.inference_mode():
        # The engine's session machinery, driven by hand: the program once, then true frames.
        engine.program, engine.facts = program, ProgramFacts.of(whole or program)
        engine._new_context()
        header = engine.m.encode(fmt.serialize_header(program, engine.format_version))
        engine._feed(header)
        engine.header_len = len(header)
        engine._rebase(steps[0][0], inverse)  # the context: program + the true first state
        for i in range(len(steps) - 1):
            state, action = steps[i]
            assert action is not None
            engine._feed(engine.m.encode(fmt.serialize_action(action)))
            mark = engine._context_len()
            began = time.perf_counter()
            trail = tuple((before, taken.kind) for before, taken in steps[:i] if taken is not None)
            generated = engine._generate_frame(state, sample=False, action=action.kind, trail=trail)
            if speed is not None:
                speed["seconds"] = speed.get("seconds", 0.0) + time.perf_counter() - began
                speed["tokens"] = speed.get("tokens", 0.0) + engine._context_len() - mark
            parsed = fmt.parse_frame(generated.text, state, inverse) if generated else None
            predictions.append(parsed if isinstance(parsed, State) else None)
            engine._crop(mark)
            engine._feed(engine.m.encode(fmt.frame_target(steps[i + 1][0], state, inverse)))
    return predictions


def evaluate(model: str | None, data_dir: str, split: str = "heldout", limit: int | None = None, progress: bool = True,
             errors_path: Path | None = None, search_branches: int | None = None) -> dict[str, Any]:
    loaded = LoadedModel.load(model)
    engine = NeuralEngine(loaded)
    if search_branches is not None:
        engine.search_branches = search_branches
    totals: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    records = list(iter_records(data_dir, split))
    if not records:
        raise FileNotFoundError(f"no {split} shards in {data_dir} (build a dataset with `ndb data build`)")
    records = records[:limit] if limit else records
    started, transitions = time.perf_counter(), 0
    speed: dict[str, float] = {}
    errors: list[dict[str, Any]] = []
    for number, record in enumerate(tqdm(records, desc="next-state", disable=not progress)):
        parsed = fmt.parse(record_text(record))
        if isinstance(parsed, fmt.FormatError):
            continue
        program, steps = parsed.program, parsed.steps
        direction = "inverse" if parsed.inverse else "forward"
        source = top_kind(str(record.get("source_kind") or "program"))  # gen, script, humaneval, algorithms
        predictions = predict_teacher_forced(engine, program, steps, parsed.inverse, speed, facts_program(record, program))
        horizons = record.get("horizons") or [1] * len(predictions)
        for i, predicted in enumerate(predictions):
            action, truth = steps[i][1], steps[i + 1][0]
            assert action is not None
            scores = compare(predicted, truth)
            keys = ["all", f"{direction}", f"action:{action.kind}", f"horizon:{horizon_bucket(horizons[i])}",
                    f"source:{source}"]
            if action.kind in BAR_ACTIONS:  # the first bar, per program source
                keys.append(f"source:{source}/into+over")
            for key in keys:
                for name, ok in scores.items():
                    totals[key][name][0] += int(ok)
                    totals[key][name][1] += 1
            transitions += 1
            if errors_path and not scores["exact"]:
                before = steps[i][0]
                errors.append({
                    "trajectory": number, "program_id": record.get("program_id"), "source": source, "direction": direction,
                    "transition": i, "action": action.kind, "horizon": horizons[i],
                    "from": {"function": before.function, "line": before.line, "depth": before.depth},
                    "wrong": [c for c in COMPONENTS if not scores[c]], "diff": describe_error(predicted, truth),
                })
    elapsed = time.perf_counter() - started
    if errors_path:
        errors_path.write_text("".join(json.dumps(error) + "\n" for error in errors))
    table = {key: {name: (hit / n if n else 0.0) for name, (hit, n) in parts.items()} | {"n": parts["exact"][1]} for key, parts in totals.items()}
    return {
        "model": loaded.path,
        "data": str(Path(data_dir)),
        "split": split,
        "search_branches": engine.search_branches,
        "trajectories": len(records),
        "transitions": transitions,
        "seconds": elapsed,
        "ms_per_transition": 1000 * elapsed / max(1, transitions),
        "ms_per_prediction": 1000 * speed.get("seconds", 0.0) / max(1, transitions),
        "frame_tokens_per_s": speed.get("tokens", 0.0) / max(1e-9, speed.get("seconds", 0.0)),
        "table": table,
    }


def format_table(result: dict[str, Any]) -> str:
    table = result["table"]
    order = sorted(table, key=lambda k: (k.split(":")[0] != "all", k.split(":")[0], k))
    lines = [f"{'group':24s} {'n':>6s} {'exact':>7s} " + " ".join(f"{c:>7s}" for c in COMPONENTS)]
    for key in order:
        row = table[key]
        lines.append(
            f"{key:24s} {row['n']:6d} {100 * row['exact']:6.1f}% " + " ".join(f"{100 * row[c]:6.1f}%" for c in COMPONENTS)
        )
    lines.append(f"{result['transitions']} transitions, {result['ms_per_transition']:.0f} ms per transition (CPU) of which "
                 f"{result.get('ms_per_prediction', 0):.0f} ms predicting the frame, {result.get('frame_tokens_per_s', 0):.0f} "
                 "frame tokens/s")
    return "\n".join(lines)


def plot(result: dict[str, Any], out_dir: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = result["table"]
    paths = []
    for prefix, title, name in (("action:", "Exact match per action", "per_action.png"), ("horizon:", "Exact match against horizon", "per_horizon.png")):
        keys = [k for k in table if k.startswith(prefix)]
        if prefix == "horizon:":
            rank = ["1", "2", "3-4", "5-8", "9-16", ">16"]
            keys.sort(key=lambda k: rank.index(k[len(prefix):]))
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.bar([k[len(prefix):] for k in keys], [100 * table[k]["exact"] for k in keys], color="#4477aa")
        ax.set_ylim(0, 100)
        ax.set_ylabel("exact match (%)")
        ax.set_title(title)
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        path = out / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(str(path))
    return paths
