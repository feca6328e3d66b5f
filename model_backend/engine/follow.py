"""Actions that run through many events, taken as single predicted steps by engines that predict one step
at a time.

step_over across a call, step_return and continue pass many events before they stop. A model can predict
such an action in one jump, but the jump is its weakest prediction: nothing checks the states it skips,
while each single step is checked and partly computed by the grammar (model_backend/grammar). So a
stepwise engine follows the action: it takes step_into until pdb's rules (docs/mdp.md) say the action
stops: at the starting frame's next event (step_over), at its return (step_return), at a line event on
a breakpoint line (any of them; continue stops only there), or at the program's end.

Following costs one prediction per event, so it has a budget (`GrammarEngine.follow_steps`, engine/driver.py;
by default DEFAULT_FOLLOW_STEPS for a program the model's header shows whole, VIEW_FOLLOW_STEPS for one it
shows as a view). Past it,
the engine finishes the action from where it got to with jumps: continue and breakpoint jump to their
stop; step_over and step_return return from each frame deeper than where they stop (a step_return jump,
then a step_into back to the caller). A budget of 0 keeps the single jump, except where an IDE breakpoint
may wait inside a call that step_over or step_return would run through: a jump cannot know it is there,
so such an action is followed anyway (with at least MAX_SINGLE_STEPS), and otherwise stepped over in its
own frame to save predictions. Which breakpoint is "in reach" comes from the source alone (ProgramFacts'
call graph); the rest of the way is the model's own predictions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_backend.state import Action, ActionKind, State

if TYPE_CHECKING:
    from model_backend.grammar import ProgramFacts

# Single steps a followed action takes when an IDE breakpoint may wait on its way (at least).
MAX_SINGLE_STEPS = 256
# The default budget of single steps for any action that runs through events (GrammarEngine.follow_steps).
# About 0.15 s a step on the 2-core development machine (docs/results.md): 128 steps is 20 s at most.
DEFAULT_FOLLOW_STEPS = 128
# The default budget of a model engine whose header shows its program as a view (too long to show whole):
# there a single step re-encodes the state's frame (about 0.6 s) and the grammar computes less of it, and
# on the realistic benchmark's dev split the one jump scores as many stops as following does, in a quarter
# of the time (docs/benchmarks.md, "Following or one jump").
VIEW_FOLLOW_STEPS = 0
# Jumps that finish an action after the budget: one or two per frame to return from.
MAX_FINISHING_JUMPS = 64

SPLIT_ACTIONS = ("step_over", "step_return")
FOLLOWED_ACTIONS = ("step_over", "step_return", "continue", "breakpoint")


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


def runs_through_events(facts: ProgramFacts, state: State, kind: str) -> bool:
    """Whether `kind` from `state` may pass events before it stops (so that following it can differ from
    one jump): continue and breakpoint from any paused state; step_return from a line or call event;
    step_over from a line that may call a function of the program. Not in a generator's or coroutine's
    frame, whose yields pdb's next and return pass over (left to the model)."""
    if kind not in FOLLOWED_ACTIONS or state.exit is not None or not state.stack:
        return False
    if kind in ("continue", "breakpoint"):
        return True
    function = state.stack[-1].function
    if function in facts.suspending:
        return False
    if kind == "step_return":
        return state.event in ("line", "call")
    return (state.event == "line" and state.line is not None
            and bool(facts.callees_at.get((function, state.line), facts.functions)))


def stop_lines(action: Action, breakpoints: frozenset[int]) -> frozenset[int]:
    """The lines whose line events stop `action`: the IDE's breakpoints, and a breakpoint action's own."""
    return breakpoints | frozenset(action.lines) if action.kind == "breakpoint" else breakpoints


def reached_stop(kind: str, start: State, state: State, lines: frozenset[int]) -> bool:
    """Whether a single step that led from `start` (through others) to `state` ends the action:
    the program's end, a failed prediction, a line event on one of `lines`, or the action's own stop.
    step_over stops at the next event of the starting frame or of a frame below it (depth at most the
    start's); step_return at the starting frame's return, or any event below it; continue and breakpoint
    only at the lines or the end."""
    if state.exit is not None or state.error is not None:
        return True
    if state.event == "line" and state.line in lines:
        return True
    if kind == "step_over":
        return state.depth <= start.depth
    if kind == "step_return":
        return state.depth < start.depth or (state.depth == start.depth and state.event == "return")
    return False


def single_step_kind(facts: ProgramFacts, start: State, state: State, breakpoints: frozenset[int],
                     follow: bool) -> ActionKind:
    """The step to take next: step_into, or, when the action is followed only for the IDE's breakpoints
    (`follow` false), step_over in the starting frame where no breakpoint is in reach of the line
    (step_return's way through its own frame)."""
    if not follow and state.depth == start.depth and not breakpoint_in_reach(facts, state, "step_over", breakpoints):
        return "step_over"
    return "step_into"


def finishing_action(facts: ProgramFacts, action: Action, state: State) -> Action:
    """The jump that brings a followed action closer to its stop from `state`, where its budget ran out:
    continue and breakpoint jump straight there; step_over and step_return leave the frame they are in
    (step_return) and, from a return event, go back to its caller (step_into). In a generator's or
    coroutine's frame pdb's return stops elsewhere (at no yield), so there the steps stay single."""
    if action.kind in ("continue", "breakpoint"):
        return action
    if state.event == "return" or not state.stack or state.stack[-1].function in facts.suspending:
        return Action(kind="step_into")
    return Action(kind="step_return")
