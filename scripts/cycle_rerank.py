"""Experiment: re-rank a frame's candidates by whether stepping back from them leads to where we were.

For each step_into / step_over transition of held-out trajectories (teacher forced, as `ndb eval
next-state`), the engine's decoder writes the greedy frame and re-decodes its `--branches` closest calls
(no pruning), giving a few candidate next states. Each candidate is then scored a second way: in a fresh
inverse context (program, the candidate as the first frame, the inverse action), the log-probability the
model gives the state we started from ("cycle" score; for a line it takes the better of the `line` and
`inv_line_call` readings, since a line that made calls is stepped back onto as `inv_line_call`).

Writes one JSON line per transition: the truth's index among the candidates (or -1) and, per candidate,
forward total log-probability, token count and cycle score. `--analyse FILE...` reads such files and
prints exact match of several selection rules.

    python scripts/cycle_rerank.py --data data_out/v2b --start 0 --limit 600 --out /tmp/cyc_0.jsonl
    python scripts/cycle_rerank.py --analyse /tmp/cyc_0.jsonl

With `--samples K` the candidates are the greedy frame and K frames sampled under the grammar instead,
and `--vote FILE...` compares greedy with a majority vote among them (self-consistency).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from model_backend import trace_format as fmt
from model_backend.data.build import iter_records, record_text
from model_backend.engine.base import context_frame
from model_backend.engine.decoding import FrameDecoder, branches_to_try
from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.eval.next_state import compare
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.state import Action, State

INVERSE_OF = {"step_into": "inv_step_into", "step_over": "inv_step_over"}


def candidates(engine: NeuralEngine, prev: State, action: str, branches: int) -> list[tuple[str, float, int]]:
    """(frame text, total log-probability, tokens) for the greedy frame and each re-decoded close call.
    The cache is left as it was (the action fed, no frame)."""
    assert engine.facts is not None
    decoder = FrameDecoder(FrameConstraint(engine.facts, prev, engine.inverse, action), engine.m.vocabulary, False)
    decoder.record_branches = branches > 0
    mark = engine._context_len()
    engine._feed([engine.m.special_ids[fmt.FRAME]])
    start = engine._context_len()
    found: list[tuple[str, float, int]] = []
    best = engine._drive(engine._finish_frame_steps(decoder))
    if best is not None:
        found.append((best.text, best.total_logprob, len(decoder.token_ids)))
    decoder.record_branches = False
    for point in branches_to_try(decoder.branch_points, branches):
        engine._crop(start + point.position)
        decoder.restore(point.snapshot)
        decoder.take(point.alternative, point.alternative_logprob)
        engine._feed([point.alternative])
        got = engine._drive(engine._finish_frame_steps(decoder))
        if got is not None:
            found.append((got.text, got.total_logprob, len(decoder.token_ids)))
    engine._crop(mark)
    return found


def sampled(engine: NeuralEngine, prev: State, action: str, k: int) -> list[str]:
    """k frames sampled from the model under the grammar (temperature 1); the cache is left as it was."""
    mark = engine._context_len()
    texts = []
    for _ in range(k):
        generated = engine._generate_frame(prev, sample=True, action=action)
        if generated is not None:
            texts.append(generated.text)
        engine._crop(mark)
    return texts


def cycle_score(m: LoadedModel, header_cache: Any, header_len: int, candidate: State, current: State, action: str) -> float | None:
    """log P(current | candidate, inverse action) in an inverse context; None when not writable."""
    readings = [current]
    if current.event == "line":
        readings.append(current.model_copy(update={"event": "inv_line_call"}))
    try:
        prefix = m.encode(context_frame(candidate, True)) + m.encode(fmt.serialize_action(Action(kind=INVERSE_OF[action])))  # type: ignore[arg-type]
    except ValueError:
        return None
    best: float | None = None
    for reading in readings:
        try:
            target = m.encode(fmt.frame_target(reading, candidate, True))
        except ValueError:
            continue
        ids = prefix + target
        out = m.model(input_ids=torch.tensor([ids]), past_key_values=header_cache, use_cache=True)
        header_cache.crop(-len(ids))  # back to the program alone (transformers 5 crops by a negative count)
        logprobs = torch.log_softmax(out.logits[0].float(), dim=-1)
        first = len(prefix)  # position of target[0] (the frame token): predicted from position first-1
        score = sum(float(logprobs[first - 1 + j, target[j]]) for j in range(1, len(target)))
        best = score if best is None else max(best, score)
    return best


def collect(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    m = LoadedModel.load(args.model)
    engine = NeuralEngine(m)
    records = list(iter_records(args.data, "heldout"))[args.start:args.start + args.limit]
    began = time.perf_counter()
    with open(args.out, "w") as out, torch.inference_mode():
        for number, record in enumerate(tqdm(records, mininterval=30)):
            parsed = fmt.parse(record_text(record))
            if isinstance(parsed, fmt.FormatError) or parsed.inverse:
                continue
            program, steps = parsed.program, parsed.steps
            engine.program, engine.facts, engine.cache = program, ProgramFacts.of(program), m.new_cache()
            engine.context_ids = []
            header = m.encode(fmt.serialize_header(program))
            engine._feed(header)
            engine.header_len = len(header)
            inv_cache = m.new_cache()
            m.model(input_ids=torch.tensor([header]), past_key_values=inv_cache, use_cache=True)
            engine._rebase(steps[0][0], False)
            for i in range(len(steps) - 1):
                state, action = steps[i]
                assert action is not None
                engine._feed(m.encode(fmt.serialize_action(action)))
                if action.kind in INVERSE_OF:
                    truth = steps[i + 1][0]
                    rows: list[dict[str, Any]] = []
                    hit = -1
                    found = candidates(engine, state, action.kind, args.branches)
                    if args.samples:  # greedy first, then samples: rows are told apart by text for voting
                        found = found[:1] + [(text, 0.0, 0) for text in sampled(engine, state, action.kind, args.samples)]
                    for k, (text, total, n) in enumerate(found):
                        cand = fmt.parse_frame(text, state, False)
                        if not isinstance(cand, State):
                            continue
                        right = compare(cand, truth)["exact"]
                        if right and hit < 0:
                            hit = len(rows)
                        cyc = None
                        if not args.samples and cand.exit is None:
                            cyc = cycle_score(m, inv_cache, len(header), cand, state, action.kind)
                        rows.append({"fwd": total, "n": n, "cyc": cyc, "right": right, "greedy": k == 0,
                                     "key": cand.model_dump_json(include={"event", "line", "locals", "value", "stack", "exit"})})
                    out.write(json.dumps({"t": args.start + number, "i": i, "action": action.kind, "hit": hit, "cands": rows}) + "\n")
                    out.flush()
                engine._feed(m.encode(fmt.frame_target(steps[i + 1][0], state, False)))
    print(f"done in {time.perf_counter() - began:.0f} s", file=sys.stderr)


def choose(cands: list[dict[str, Any]], rule: str, lam: float) -> int:
    if not cands:
        return -1
    if rule == "greedy":
        return 0
    def score(c: dict[str, Any]) -> float:
        base = c["fwd"]
        if rule == "fwd":
            return base
        cyc = c["cyc"] if c["cyc"] is not None else 0.0
        if rule == "cyc_only":
            return cyc
        return base + lam * cyc
    if rule != "fwd" and any(c["cyc"] is None for c in cands):
        return 0
    return max(range(len(cands)), key=lambda k: score(cands[k]))


def vote(paths: list[str]) -> None:
    """For files written with --samples: greedy against the most frequent frame among greedy and the
    samples (ties go to greedy), and among the samples alone."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    for action in ("step_into", "step_over"):
        sub = [r for r in rows if r["action"] == action]
        greedy = voted = alone = anywhere = 0
        for r in sub:
            cands = r["cands"]
            if not cands:
                continue
            greedy += int(cands[0]["greedy"] and cands[0]["right"])
            anywhere += int(any(c["right"] for c in cands))
            voted += int(_most_frequent_is_right(cands, cands))
            alone += int(_most_frequent_is_right(cands, [c for c in cands if not c["greedy"]]))
        n = len(sub)
        print(f"{action}: {n} transitions, greedy {greedy / n:.1%}, vote {voted / n:.1%}, "
              f"vote of the samples alone {alone / n:.1%}, truth among them {anywhere / n:.1%}")


def _most_frequent_is_right(cands: list[dict[str, Any]], voters: list[dict[str, Any]]) -> bool:
    if not voters:
        return False
    counts = Counter(c["key"] for c in voters)
    top = max(counts.values())
    best = [key for key, count in counts.items() if count == top]
    choice = cands[0]["key"] if cands[0]["greedy"] and cands[0]["key"] in best else best[0]
    return any(c["right"] for c in cands if c["key"] == choice)


def analyse(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()]
    for action in ("step_into", "step_over"):
        sub = [r for r in rows if r["action"] == action]
        n = len(sub)
        oracle = sum(r["hit"] >= 0 for r in sub)
        print(f"{action}: {n} transitions, truth among candidates {oracle} ({oracle / n:.1%})")
        for rule, lam in [("greedy", 0), ("fwd", 0), ("cyc_only", 0), *[("mix", x) for x in (0.25, 0.5, 1.0, 2.0, 4.0)]]:
            right = sum(1 for r in sub if (k := choose(r["cands"], rule, lam)) >= 0 and r["cands"][k]["right"])
            print(f"  {rule:9s} {lam:4.2f}: {right / n:.1%} ({right})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None)
    ap.add_argument("--data", default="data_out/v2b")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=600)
    ap.add_argument("--branches", type=int, default=4)
    ap.add_argument("--samples", type=int, default=0, help="instead of the close calls: greedy plus this many sampled frames (for voting)")
    ap.add_argument("--out", default="/tmp/cycle.jsonl")
    ap.add_argument("--analyse", nargs="*")
    ap.add_argument("--vote", nargs="*", help="files written with --samples: compare voting with greedy")
    args = ap.parse_args()
    if args.vote:
        vote(args.vote)
    elif args.analyse:
        analyse(args.analyse)
    else:
        collect(args)


if __name__ == "__main__":
    main()
