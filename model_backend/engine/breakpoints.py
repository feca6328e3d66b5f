"""IDE breakpoints under step_over and step_return, for engines that predict one step at a time.

pdb's `next` and `return` stop at a breakpoint hit inside a call they would otherwise run through
(docs/mdp.md). A model trained on step_over predicts where the frame goes next; it cannot be told that
a breakpoint waits in the callee. So when a breakpoint may be hit on the way, a stepwise engine takes
the action as single steps (step_into inside calls, step_over where no breakpoint is in reach) and
stops by pdb's rules: at a line event on a breakpoint line, at any depth, or where the action itself
stops. Which breakpoint is "in reach" comes from the source alone (ProgramFacts' call graph); the rest
of the way is the model's own predictions.
"""

from __future__ import annotations

from model_backend.engine.constraint import ProgramFacts
from model_backend.state import ActionKind, State

# Single steps one step_over or step_return may take before the engine gives up on following the
# calls and predicts the action in one jump instead (breakpoints inside then go unseen, as before).
MAX_SINGLE_STEPS = 256

SPLIT_ACTIONS = ("step_over", "step_return")


def reachable_functions(facts: ProgramFacts, start: frozenset[str]) -> frozenset[str]:
    """`start` and every function a frame of one of them can call, directly or not. A module frame
    is never called."""
    seen: set[str] = set()
    todo = [f for f in start if f != "<module>"]
    while todo:
        function = todo.pop()
        if function in seen:
            continue
        seen.add(function)
        todo.extend(f for f in facts.callees_of.get(function, facts.functions) if f != "<module>" and f not in seen)
    return frozenset(seen)


def breakpoint_in_reach(facts: ProgramFacts, state: State, kind: str, breakpoints: frozenset[int]) -> bool:
    """Whether `kind` from `state` may pass a line event on one of `breakpoints` before its own stop:
    for step_over from a line, one inside a function that line may call; for step_return, also one of
    the frame's own lines. Other states and actions stop after one event, so nothing is passed."""
    if kind not in SPLIT_ACTIONS or not breakpoints or state.exit is not None or not state.stack:
        return False
    function = state.stack[-1].function
    if function in facts.suspending:  # pdb's next/return pass over a generator's yields: left to the model
        return False
    if kind == "step_over":
        if state.event != "line" or state.line is None:
            return False
        callees = facts.callees_at.get((function, state.line), facts.functions)
        reach = reachable_functions(facts, callees)
    else:
        if state.event not in ("line", "call"):
            return False
        reach = reachable_functions(facts, facts.callees_of.get(function, facts.functions)) | {function}
    # Only functions whose lines are known (a def, a class body, a comprehension, a lambda) can hold one.
    return any(callee in facts.spans and facts.may_be_in(callee, line) for callee in reach for line in breakpoints)


def reached_stop(kind: str, start: State, state: State, breakpoints: frozenset[int]) -> bool:
    """Whether a single step that led from `start` (through others) to `state` ends the action:
    the program's end, a line event on a breakpoint line, or the action's own stop. step_over stops at
    the next event of the starting frame or of a frame below it (depth at most the start's); step_return at the
    starting frame's return, or any event below it."""
    if state.exit is not None or state.error is not None:
        return True
    if state.event == "line" and state.line in breakpoints:
        return True
    if kind == "step_over":
        return state.depth <= start.depth
    return state.depth < start.depth or (state.depth == start.depth and state.event == "return")


def single_step_kind(facts: ProgramFacts, start: State, state: State, breakpoints: frozenset[int]) -> ActionKind:
    """The step to take next: step_over in the starting frame where no breakpoint is in reach of the
    line (step_return's way through its own frame), step_into everywhere else."""
    if state.depth == start.depth and not breakpoint_in_reach(facts, state, "step_over", breakpoints):
        return "step_over"
    return "step_into"
