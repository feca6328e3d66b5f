"""`ndb grammar check DATA SPLIT [N]`: count the traced values and stacks that the grammar's shape rules
would refuse (it should be none).

    ndb grammar check data_out/mix4 train 30000
    ndb grammar check data_out/v2 heldout

Every local and return value of the first N trajectories of a split is fed, as the JSON string the trace
format writes, through `JsonString(repr_shape=True)`; every stack through `Stack` with the facts of the
trajectory's program (known functions, every entry on a line of its own function, every caller on a
line that can call the entry above it, the last on the frame's line); every state's local names through
the names the grammar lets a frame of its function hold; and every whole frame through the grammar after the
action that led to it (so the rules that depend on the action, such as which line can follow which, apply).
These are the rules constrained decoding uses.
The facts come from the whole program, as the engines take them: a record's `program_source` where its
header shows a program view (builds with `--header-tokens`, `ndb data programs`), else the header's program.
Prints the counts and the longest run of one character in a value (against MAX_RUN), then any value,
stack or name refused (at most 20 of each).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from model_backend import trace_format as fmt
from model_backend.data.build import iter_records, record_text
from model_backend.data.from_programs import program_records
from model_backend.grammar import MAX_RUN, FrameConstraint, JsonString, ProgramFacts, Stack
from model_backend.program import Program
from model_backend.state import State


def value_refused(value: str, unique_keys: bool) -> bool:
    fed = JsonString(repr_shape=True, unique_keys=unique_keys).feed(json.dumps(value, ensure_ascii=False).encode())
    return fed is None or not fed.complete


def longest_run(text: str) -> int:
    return max((len(m.group(0)) for m in re.finditer(r"(.)\1*", text, re.DOTALL)), default=0)


def stack_refused(state: State, facts: ProgramFacts) -> bool:
    fed = Stack.for_frame(facts, state.line).feed(fmt._json([[f.function, f.line] for f in state.stack]).encode())
    return fed is None or not fed.complete


def walked_frame(facts: ProgramFacts, prev: State | None, state: State, inverse: bool, action: str | None,
                 trail: tuple[tuple[State, str], ...] = ()) -> FrameConstraint | None:
    """Walk the whole frame's text through the grammar, as constrained decoding would write it after
    `action` (the rules that need the action, such as the flow of lines, included), with `trail` the
    states before `prev` and the action taken from each: the grammar at its end, or None if it refused."""
    constraint = FrameConstraint(facts, prev, inverse, action, trail)
    try:
        constraint.push_frame_text(fmt.frame_target(state, prev, inverse)[len(fmt.FRAME):])
    except ValueError:
        return None
    return constraint if constraint.done else None


def check(data: str, split: str, limit: int | None = None) -> list[str]:
    """The report's lines for a build's split: the counts, then what the grammar refused (at most 20 of each
    kind)."""
    records = iter_records(data, split)
    return check_texts(((record_text(r), r.get("program_source")) for r in records), f"{data} ({split})", limit)


def program_texts(programs: Iterable[Program], trajectories: int, seed: int = 0,
                  version: int = fmt.FORMAT_VERSION) -> Iterator[str]:
    """`trajectories` trajectories of each program (two forward, one inverse, in turn), drawn as a build
    draws them from one sandboxed trace, in trace format `version` (2 or 3) with the whole program in the
    header (`from_programs.program_records`, every draw kept)."""
    for _, record in program_records(programs, trajectories, seed, version, unique=False):
        if record is not None:
            yield "".join(text for text, _ in record["segments"])


def check_texts(texts: Iterable[str | tuple[str, str | None]], label: str, limit: int | None = None) -> list[str]:
    """The report's lines for trajectories in the trace format, each alone or with the whole program's
    source where its header shows a view: the counts, then what the grammar refused (at most 20 of each
    kind)."""
    values = stacks = trajectories = names = run = frames = loop_steps = appends = stores = returns = ordered = comprehensions = truths = 0
    computed = mutating = mutated = printed = silent = after_call = undone = preceded = 0
    called = after_callee = comprehension_results = cannot_raise = attributes = body_starts = 0
    constructed = kept = sealed = must_call = method_calls = 0
    refused_frames: list[str] = []
    refused_values: list[str] = []
    refused_stacks: list[str] = []
    refused_names: list[str] = []
    for item in texts:
        if limit is not None and trajectories >= limit:
            break
        text, whole = (item, None) if isinstance(item, str) else item
        parsed = fmt.parse(text)
        if isinstance(parsed, fmt.FormatError):
            continue
        trajectories += 1
        facts = ProgramFacts.of(Program(source=whole if whole is not None else parsed.code, entry=parsed.entry),
                                objects=parsed.version >= 3)
        prev: State | None = None
        taken: str | None = None
        trail: list[tuple[State, str]] = []
        for state, action in parsed.steps:
            frames += 1
            constraint = walked_frame(facts, prev, state, parsed.inverse, taken, tuple(trail))
            if constraint is None:
                refused_frames.append(f"{parsed.entry or ''}: after {taken} from line {prev.line if prev else None}: "
                                      f"{fmt.frame_target(state, prev, parsed.inverse)[:300]}")
            elif prev is not None:  # which rules governed the step
                keys = frozenset(k.encode() for k in facts.names)
                from_line = constraint._step_from_line()
                loop_steps += constraint._loop_step is not None
                comprehensions += (constraint._comprehension_step is not None) + (constraint._outer_after_inner is not None)
                truths += constraint._truth_step is not None
                appends += (from_line and prev.line in facts.appends
                            and constraint._appended(*facts.appends[prev.line]) is not None)
                stores += constraint._item_store(keys) is not None
                ordered += (from_line and prev.line in facts.line_orders and constraint._statement_successors() is not None)
                returns += bool(constraint._caller_after_return(keys))
                mutated += bool(constraint._mutated(keys))
                computed += bool(constraint._computed(keys)) or constraint._returned_value() is not None and (
                    prev.line in facts.computed_returns)
                caller = constraint._returned_to_caller()
                after_call += caller is not None and constraint._value_after_call(caller, prev)[1] is not None
                undone += bool(constraint._computed_back(keys))
                preceded += constraint._preceding_lines() is not None
                called += bool(constraint._call_arguments(keys))
                after_callee += constraint._caller_line_after_return is not None
                comprehension_results += constraint._comprehension_result() is not None
                cannot_raise += constraint._computes_here
                attributes += bool(constraint._attribute_updated(keys))
                body_starts += constraint._first_lines_after_call() is not None
                must_call += taken == "step_into" and from_line and prev.line in facts.must_call
                method_calls += taken == "step_into" and from_line and constraint._calls_a_method()
                constructed += constraint._step_within_frame() and prev.line in facts.constructed
                kept += bool(constraint._kept_in_frame(keys))
                sealed += from_line and bool(facts.sealed_in(prev) & set(prev.locals))
                printed += bool(constraint._printed)
                silent += constraint._printed == ""
                mutating += (constraint._step_within_frame() or constraint.event == "return" and from_line) and (
                    prev.line in facts.mutating)
            if prev is not None and taken is not None:
                trail.append((prev, taken))
            prev, taken = state, action.kind if action is not None else None
            for value in [*state.locals.values(), *([state.value] if state.value is not None else [])]:
                values += 1
                run = max(run, longest_run(value))
                if value_refused(value, facts.unique_keys):
                    refused_values.append(value)
            if state.stack:
                allowed = facts.locals_of(state.stack[-1].function)
                names += len(state.locals)
                refused_names += [f"{state.stack[-1].function}: {k}" for k in state.locals if k not in allowed]
            if state.stack and state.line is not None:
                stacks += 1
                if stack_refused(state, facts):
                    refused_stacks.append(f"{parsed.entry or ''}: line {state.line}, {[(f.function, f.line) for f in state.stack]}")
    report = [f"{trajectories} trajectories of {label}: {values} values, refused {len(refused_values)}; "
          f"{stacks} stacks, refused {len(refused_stacks)}; {names} local names, refused {len(refused_names)}; "
          f"longest run of one character in a value: {run} (MAX_RUN {MAX_RUN}); "
          f"{frames} whole frames after their actions, refused {len(refused_frames)} "
          f"({loop_steps} of them steps from a `for` header whose element the shown values tell, "
          f"{appends} steps over `xs.append(y)` whose list they tell, "
          f"{stores} steps over a store of one item whose list or dict they tell, "
          f"{returns} steps from a return back to a caller whose variables the trail tells, "
          f"{ordered} steps from a line of a statement whose line events follow its code, "
          f"{comprehensions} steps in a comprehension whose element the shown values tell, "
          f"{truths} steps from an `if` or `while` header whose branch the shown values tell, "
          f"{computed} steps binding or returning an expression of builtins whose value the shown values tell, "
          f"{mutating} steps from a line that changes objects only through names, "
          f"{mutated} steps changing a list or dict whose value after it the shown values tell, "
          f"{printed} steps whose printed text the shown values tell, {silent} steps that surely print nothing, "
          f"{after_call} steps back to a line whose value with the one call's result the shown values tell, "
          f"{undone} inverse steps onto a line whose earlier value of what it changes the later values tell, "
          f"{preceded} inverse steps onto a line that the later line can follow, "
          f"{called} steps onto a call whose arguments the calling line tells, "
          f"{after_callee} steps from a return to a caller whose line says whether it can return, "
          f"{comprehension_results} comprehension returns whose value the shown values tell, "
          f"{cannot_raise} steps from a line whose computed value says it raised nothing, "
          f"{attributes} steps after which an object's new text is known from an attribute update, "
          f"{body_starts} steps from a call event to the function's first statement, "
          f"{must_call} step_into from a line that always calls a function or class of the program, "
          f"{method_calls} step_into from a line that calls a method of the program on an instance, "
          f"{constructed} steps over `name = C(...)` whose new instance's text is known, "
          f"{kept} jumps within one frame whose unchanging parameters' values are known, "
          f"{sealed} steps in the entry frame that cannot change a sealed parameter)"]
    items = refused_values[:20] + refused_stacks[:20] + refused_names[:20] + refused_frames[:20]
    return report + [f"   {item!r}" for item in items]
