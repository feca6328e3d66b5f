"""Where a model's frames go wrong on a build: for each transition greedy decoding gets wrong, the part of
the frame its first wrong choice falls in (the teacher-forced estimate of model_backend/eval/teacher_forced.py,
with the grammar, on the model alone).

    python scripts/first_wrong_choice.py data_out/rdev2 [--model DIR] [--limit N] [--split heldout] [--detail]

Parts: the event (line, call, return, ...), the line number, the stack, which locals the frame writes (a
name, or whether another follows), a local's value, the return value, printed text, and the frame's end.
A wrong transition counts once, at its first wrong choice: what follows it is written after a mistake.
`--detail` adds, for the first wrong choices of an event, the true event and the one chosen, and for those
of a line number, the kind of statement the previous state stood on.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from model_backend.engine.decoding import Vocabulary
from model_backend.engine.neural import DEFAULT_CHECKPOINT, LoadedModel
from model_backend.eval.teacher_forced import MemberChoices, Scorer, first_records, member_choices, replay
from model_backend.grammar import FrameConstraint, Locals


def part(constraint: FrameConstraint) -> str:
    """The part of the frame a choice made in this grammar state writes."""
    if constraint.elements is None:
        return "event"
    slot = constraint.slot
    kind = constraint.slot_kind
    if kind == "locals" and isinstance(slot, Locals):
        if slot.phase in (1, 2, 6):
            return "locals: which names"
        return "locals: a value"
    if kind == "line":
        return "line number"
    if kind in ("stack", "value"):
        return {"stack": "stack", "value": "return value"}[kind]
    if kind == "string":
        return "printed text or exception"
    return "frame's end, or whether it prints"


def chosen(scorer: Scorer, member: MemberChoices, choice: int) -> int:
    """The token greedy decoding takes at a wrong choice: the likeliest one the grammar allows."""
    return next(int(t) for t in member.ids[choice].tolist() if t != scorer.rep.targets[choice] and scorer.allowed(choice, t))


def token_text(vocab: Vocabulary, token: int) -> str:
    data = vocab.token_bytes[token]
    return vocab.special_by_id.get(token, "?") if data is None else data.decode("utf-8", "replace").strip()


def statement_kind(constraint: FrameConstraint) -> str:
    """The kind of statement the state before the frame stands on (its line's first word), with its event."""
    prev = constraint.prev
    if prev is None or prev.line is None:
        return "(no line)"
    text = constraint.facts.lines.get(prev.line, "").strip()
    word = text.split("(")[0].split()[0].rstrip(":") if text else ""
    keywords = {"if", "elif", "else", "while", "for", "return", "try", "except", "with", "def", "class", "yield",
                "raise", "break", "continue", "@dataclass", "pass", "assert", "del", "import", "from"}
    kind = word if word in keywords else ("call " if "(" in text else "") + ("assignment" if "=" in text else "expression")
    return f"{prev.event} on {kind}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("--model", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--split", default="heldout")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--detail", action="store_true")
    args = parser.parse_args()
    vocab = LoadedModel.load(args.model).vocabulary
    rep = replay(vocab, first_records(args.data, args.split, args.limit))
    member = member_choices(Path(args.model), rep)
    scorer = Scorer(rep, [member], vocab)
    wrong = scorer.wrong_choices([1.0])
    counts: collections.Counter[str] = collections.Counter()
    details: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    by_action: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for t in rep.transitions:
        if not t.producible:
            where = "(the grammar or tokenizer cannot produce the true frame)"
        else:
            first = next((c for c in t.choices if c in wrong), None)
            where = "(right)" if first is None else part(rep.constraints[first])
            if args.detail and first is not None and where == "event":
                true, taken = (token_text(vocab, t) for t in (int(rep.targets[first]), chosen(scorer, member, first)))
                details[where][f"{t.action}: {true} -> {taken}"] += 1
            elif args.detail and first is not None and where == "line number":
                details[where][f"{t.action}: {statement_kind(rep.constraints[first])}"] += 1
        counts[where] += 1
        by_action[t.action][where] += 1
    total = sum(counts.values())
    print(f"{args.data} ({args.split}), {total} transitions, model {args.model}")
    for where, n in counts.most_common():
        print(f"  {where:<58} {n:>6}  {n / total:6.1%}")
    for action in ("step_into", "step_over"):
        row = by_action.get(action)
        if row:
            n_all = sum(row.values())
            print(f"{action} ({n_all}): " + ", ".join(f"{w} {n / n_all:.1%}" for w, n in row.most_common()))
    for where, row in details.items():
        print(f"first wrong choice of {where}, by kind ({sum(row.values())}):")
        for kind, n in row.most_common(25):
            print(f"  {kind:<58} {n:>6}")


if __name__ == "__main__":
    main()
