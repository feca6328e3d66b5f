"""Greedy next-state exact match, estimated from one teacher-forced pass per member instead of a decode.

`ndb eval next-state` decodes every frame token by token. But greedy decoding writes the true frame
exactly when, at each token it chooses, the best token the grammar allows is the true one. So:

1. `replay` walks `FrameDecoder` along each true frame, as `predict_teacher_forced` feeds it (program,
   true first state, then action and true frame after action), and records every choice: where it is in
   the trajectory's token ids, the true token, and the grammar's state there.
2. `member_choices` runs one member once over each whole trajectory and keeps, at every choice, its top
   `TOP_K` log-probabilities and the true token's.
3. `Scorer` finds, for a weighted mean of any members (the ensemble's rule, `EnsembleLM.combine`), the
   choices where an allowed token beats the true one. A frame with none of them is right.

Stage 2 costs about one minute per member for 600 trajectories on this CPU (the decode: 40 minutes for
four members), stage 3 seconds per weight vector, so members and weights can be compared freely.

The estimate never calls a frame right that greedy decoding gets wrong: rivals outside a member's top
TOP_K are scored with its TOP_K-th log-probability, more than they have. It calls some right frames
wrong: the model may write the true text in other tokens than the tokenizer's, or another frame text
that parses to the same state (a full dict for a diff). On the first 600 held-out trajectories of
`data_out/v2b` and the four-member default it agreed with the decode on 3,897 of 3,955 transitions, the
58 others being right in the decode.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import LlamaForCausalLM

from model_backend import trace_format as fmt
from model_backend.data.build import facts_program, iter_records, record_text
from model_backend.engine.base import context_frame
from model_backend.engine.decoding import FrameDecoder, Vocabulary
from model_backend.eval.next_state import BAR_ACTIONS
from model_backend.grammar import FrameConstraint, ProgramFacts

TOP_K = 64


@dataclass(frozen=True)
class Transition:
    trajectory: int  # index among the records replayed
    index: int  # transition number within the trajectory (as `--errors` files number them)
    action: str
    choices: tuple[int, ...]  # its choices, as indices into Replay.targets
    producible: bool  # the grammar accepts the true frame and the forced text tokenizes as in the data


@dataclass
class Replay:
    """What the grammar and the tokenizer say about the true frames, whatever the model."""

    sequences: list[list[int]]  # per trajectory, the token ids the evaluation feeds
    choice_positions: list[list[int]]  # per trajectory, the index in its sequence of each choice
    targets: np.ndarray  # per choice, the true token id
    constraints: list[FrameConstraint]  # per choice, the grammar's state before it
    transitions: list[Transition]

    def key(self) -> str:
        """A name for this replay's choices (for caching members' log-probabilities)."""
        digest = hashlib.sha256()
        for seq in self.sequences:
            digest.update(np.asarray(seq, dtype=np.int32).tobytes())
        digest.update(self.targets.tobytes())
        return digest.hexdigest()[:16]


def first_records(data: str | Path, split: str = "heldout", limit: int | None = None) -> list[dict[str, Any]]:
    """The first `limit` trajectory records of a split (all of them without a limit), read once."""
    return list(itertools.islice(iter_records(data, split), limit))


def replay(vocab: Vocabulary, records: list[dict[str, Any]]) -> Replay:
    """Walk the grammar along every true frame of these records; trajectories are numbered by their index."""
    frame_id = vocab.special_ids[fmt.FRAME]
    sequences: list[list[int]] = []
    positions: list[list[int]] = []
    targets: list[int] = []
    constraints: list[FrameConstraint] = []
    transitions: list[Transition] = []
    for number, record in enumerate(records):
        parsed = fmt.parse(record_text(record))
        if isinstance(parsed, fmt.FormatError):
            continue
        program, steps, inverse = parsed.program, parsed.steps, parsed.inverse
        facts = ProgramFacts.of(facts_program(record, program))
        ids = vocab.encode(fmt.serialize_header(program, parsed.version)) + vocab.encode(context_frame(steps[0][0], inverse))
        chosen: list[int] = []
        for i in range(len(steps) - 1):
            state, action = steps[i]
            assert action is not None
            ids += vocab.encode(fmt.serialize_action(action))
            target = vocab.encode(fmt.frame_target(steps[i + 1][0], state, inverse))
            start = len(ids)
            ids += target
            trail = tuple((before, taken.kind) for before, taken in steps[:i] if taken is not None)
            decoder = FrameDecoder(FrameConstraint(facts, state, inverse, action.kind, trail), vocab, sample=False)
            j, producible, mine = 1, target[:1] == [frame_id], []
            while producible and not decoder.done and j < len(target):
                forced = decoder.take_forced()
                if forced is not None:
                    producible = target[j:j + len(forced)] == forced
                    j += len(forced)
                    continue
                token = target[j]
                if not decoder.allows(token):
                    producible = False
                    break
                mine.append(len(targets))
                chosen.append(start + j)
                targets.append(token)
                constraints.append(copy.copy(decoder.constraint))
                decoder.take(token, 0.0)
                j += 1
            transitions.append(Transition(number, i, action.kind, tuple(mine), producible and decoder.done))
        sequences.append(ids)
        positions.append(chosen)
    return Replay(sequences, positions, np.array(targets, dtype=np.int64), constraints, transitions)


@dataclass
class MemberChoices:
    """One member's log-probabilities at every choice of a replay."""

    ids: np.ndarray  # [choices, TOP_K] its most likely tokens
    logprobs: np.ndarray  # [choices, TOP_K] their log-probabilities
    target: np.ndarray  # [choices] the true token's log-probability


def member_choices(model_dir: str | Path, rep: Replay, cache: Path | None = None,
                   log: Callable[[str], None] | None = None) -> MemberChoices:
    """Teacher-forced log-probabilities of one model directory, cached in `cache` by weights and replay."""
    model_dir = Path(model_dir)
    file = None
    if cache is not None:
        weights = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(model_dir.glob("*.safetensors"))))
        file = cache / f"{model_dir.name}-{weights.hexdigest()[:12]}-{rep.key()}-{TOP_K}.npz"
        if file.exists():
            data = np.load(file)
            return MemberChoices(data["ids"], data["logprobs"], data["target"])
    model = LlamaForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    model.eval()
    n = len(rep.targets)
    out = MemberChoices(np.zeros((n, TOP_K), np.int32), np.zeros((n, TOP_K), np.float32), np.zeros(n, np.float32))
    k, began = 0, time.perf_counter()
    with torch.inference_mode():
        for number, (seq, chosen) in enumerate(zip(rep.sequences, rep.choice_positions, strict=True)):
            if chosen:
                logits = model(input_ids=torch.tensor([seq])).logits[0]
                logprobs = logits[torch.tensor(chosen) - 1].float().log_softmax(-1)  # the logits before each choice
                values, order = logprobs.topk(TOP_K, dim=-1)
                rows = slice(k, k + len(chosen))
                out.ids[rows], out.logprobs[rows] = order.numpy(), values.numpy()
                out.target[rows] = logprobs.gather(1, torch.from_numpy(rep.targets[rows])[:, None])[:, 0].numpy()
                k += len(chosen)
            if log and number % 100 == 99:
                log(f"{model_dir.name}: {number + 1}/{len(rep.sequences)} trajectories, {time.perf_counter() - began:.0f} s")
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        np.savez(file, ids=out.ids, logprobs=out.logprobs, target=out.target)
    return out


@dataclass
class Scores:
    table: dict[str, tuple[float, int]]  # "all", "action:KIND", "into+over" -> (exact match, transitions)
    right: dict[tuple[int, int], bool]  # (trajectory, transition) -> the frame would be decoded right


class Scorer:
    def __init__(self, rep: Replay, members: list[MemberChoices], vocab: Vocabulary) -> None:
        self.rep, self.members, self.vocab = rep, members, vocab
        self._allowed: dict[tuple[int, int], bool] = {}
        # Only where some member prefers another token can a weighted mean of them prefer one.
        best = np.stack([m.ids[:, 0] for m in members])
        self.contested = np.nonzero((best != rep.targets[None, :]).any(axis=0))[0]

    def allowed(self, choice: int, token: int) -> bool:
        key = (choice, token)
        if key not in self._allowed:
            self._allowed[key] = FrameDecoder(self.rep.constraints[choice], self.vocab, sample=False).allows(token)
        return self._allowed[key]

    def wrong_choices(self, weights: list[float]) -> set[int]:
        """The choices where an allowed token outscores the true one under these member weights."""
        wrong = set()
        for c in self.contested.tolist():
            target = int(self.rep.targets[c])
            rows = [(w, dict(zip(m.ids[c].tolist(), m.logprobs[c].tolist(), strict=True)), float(m.logprobs[c, -1]))
                    for w, m in zip(weights, self.members, strict=True) if w > 0]
            bar = sum(w * float(m.target[c]) for w, m in zip(weights, self.members, strict=True) if w > 0)

            def score(token: int, rows: list[tuple[float, dict[int, float], float]] = rows) -> float:
                return sum(w * row.get(token, floor) for w, row, floor in rows)

            rivals = sorted({t for _, row, _ in rows for t in row if t != target}, key=score, reverse=True)
            for token in rivals:
                if score(token) <= bar:
                    break
                if self.allowed(c, token):
                    wrong.add(c)
                    break
        return wrong

    def score(self, weights: list[float]) -> Scores:
        wrong = self.wrong_choices(weights)
        totals: dict[str, list[int]] = {}
        right = {}
        for t in self.rep.transitions:
            ok = t.producible and not any(c in wrong for c in t.choices)
            right[(t.trajectory, t.index)] = ok
            for key in ("all", f"action:{t.action}", *(("into+over",) if t.action in BAR_ACTIONS else ())):
                counts = totals.setdefault(key, [0, 0])
                counts[0] += int(ok)
                counts[1] += 1
        return Scores({k: (hit / n, n) for k, (hit, n) in sorted(totals.items())}, right)


def compare_models(models: list[str | None], data: str, split: str = "heldout", limit: int | None = None,
                   weights: str = "", cache: Path | None = None,
                   log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """`ndb eval teacher-forced`: the estimate for each weight vector over `models` (None: the shipped
    model), one vector per ';' in `weights` (default: each model alone). Each row holds the weights, the
    table (`Scores.table`) and a printable line. Raises ValueError for a vector that does not fit."""
    from model_backend.engine.neural import DEFAULT_CHECKPOINT, LoadedModel

    paths = [Path(m) if m else DEFAULT_CHECKPOINT for m in models]
    vocab = LoadedModel.load(paths[0]).vocabulary
    records = first_records(data, split, limit)
    if not records:
        raise FileNotFoundError(f"no {split} records in {data}")
    began = time.perf_counter()
    rep = replay(vocab, records)
    if log:
        log(f"{len(rep.transitions)} transitions, {len(rep.targets)} choices, "
            f"{sum(not t.producible for t in rep.transitions)} the grammar or tokenizer cannot produce "
            f"({time.perf_counter() - began:.0f} s)")
    names = [str(p) for p in paths]
    vectors = ([[float(x) for x in v.split(",")] for v in weights.split(";")] if weights
               else [[float(i == j) for j in range(len(paths))] for i in range(len(paths))])
    for vector in vectors:
        if len(vector) != len(paths) or not any(vector) or min(vector) < 0:
            raise ValueError(f"weights {vector}: give one weight >= 0 per model ({len(paths)}), not all 0")
    scorer = Scorer(rep, [member_choices(p, rep, cache, log) for p in paths], vocab)
    rows = []
    for vector in vectors:
        table = scorer.score(vector).table
        shown = {"all": "all", "action:step_into": "step_into", "action:step_over": "step_over", "into+over": "into+over"}
        parts = "  ".join(f"{label} {table[k][0]:.1%} ({table[k][1]})" for k, label in shown.items() if k in table)
        who = " + ".join(f"{w:g}*{n}" for n, w in zip(names, vector, strict=True) if w) if len(paths) > 1 else names[0]
        rows.append({"models": names, "weights": vector, "table": {k: list(v) for k, v in table.items()},
                     "line": f"{who}: {parts}"})
    return rows
