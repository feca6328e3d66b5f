"""Stochastic debugger trajectories over a recorded trace, and the training text made from them.

Forward policy (ND): with probability 0.5 mixture (a) step_into 0.35, step_over 0.1,
step_return 0.2, breakpoint 0.1, continue 0.05; otherwise (b) step_into 0.5, step_over 0.5 —
renormalised over the actions available at the state. Inverse trajectories start at the end (or at
a random state) and use inv_step_into / inv_step_over / inv_step_call. For long traces the
trajectory may start at any call on the stack ("entry point sampling"): the trace is cut to that
call's subtree and treated as if the call were the entry.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from model_backend import trace_format as fmt
from model_backend.mdp import BdbState, TraceMDP
from model_backend.program import Program, ProgramError, return_line
from model_backend.state import Action, StackFrame, State, TraceResult
from model_backend.view import ProgramView, choose_view

POLICY_A = {"step_into": 0.35, "step_over": 0.1, "step_return": 0.2, "breakpoint": 0.1, "continue": 0.05}
POLICY_B = {"step_into": 0.5, "step_over": 0.5}
POLICY_INVERSE = {"inv_step_into": 0.45, "inv_step_over": 0.4, "inv_step_call": 0.15}

Steps = list[tuple[State, Action | None]]


@dataclass
class SamplerConfig:
    max_steps: int = 24  # actions per trajectory
    sub_entry_prob: float = 0.3  # chance of starting at a random call instead of the entry
    inverse_from_end_prob: float = 0.7  # inverse trajectories: start at the last state, else anywhere
    unreached_breakpoint_prob: float = 0.1  # breakpoint on a line the rest of the run never reaches
    # Inverse trajectories that start at a return: chance that its locals are left out, as when only the
    # output is known (CruxEval's input task starts there). 0 in data_out/v1 and v2. When the hidden start
    # is the entry's own return, the builder also hides the entry's arguments (`hidden_entry`).
    hide_start_locals_prob: float = 0.0
    # Inverse trajectories that are an input jump: only the entry's return value is known (as in
    # `known_return`, which input inference starts from), and the one action is inv_step_call back to the
    # call, whose locals are the arguments. Input inference's proposals are this prediction; with the mix
    # above, it is about 1% of a build's trajectories.
    input_jump_prob: float = 0.0


def sub_trace(result: TraceResult, call_index: int) -> TraceResult:
    """The subtree of the call at `call_index`, re-rooted so that this call is the entry."""
    events = result.events
    root = events[call_index]
    # The root frame's own events sit at root.depth (its lines as well as its call), its callees
    # deeper: take events up to and including the root's return, never past a sibling or the caller.
    end = call_index
    while end + 1 < len(events):
        nxt = events[end + 1]
        if nxt.depth < root.depth or (nxt.depth == root.depth and nxt.frame_id != root.frame_id):
            break
        end += 1
        if nxt.frame_id == root.frame_id and nxt.event == "return":
            break
    cut = len(root.stack) - 1
    rebased = []
    for k, ev in enumerate(events[call_index : end + 1]):
        stack = [StackFrame(function=f.function, line=f.line) for f in ev.stack[cut:]]
        parent = -1 if ev.frame_id == root.frame_id else ev.parent_id
        rebased.append(
            ev.model_copy(update={"index": k, "depth": ev.depth - root.depth, "stack": stack, "parent_id": parent})
        )
    last = rebased[-1]
    returned = last.frame_id == root.frame_id and last.event == "return"
    raised = returned and len(rebased) > 1 and rebased[-2].event == "exception" and last.value in (None, "None")
    if returned and not raised:
        return TraceResult(events=rebased, exit="normal")
    if raised:
        return TraceResult(events=rebased, exit="error", exit_reason=rebased[-2].value)
    return TraceResult(events=rebased, exit=result.exit, exit_reason=result.exit_reason)


def _choose(rng: random.Random, weights: dict[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, weights=[weights[n] for n in names])[0]


def _breakpoint_line(
    rng: random.Random, mdp: TraceMDP, position: int, program: Program, config: SamplerConfig
) -> int:
    after = mdp.nodes[position].after
    future = sorted({e.line for e in mdp.events[after + 1 :] if e.event == "line"})
    if future and rng.random() >= config.unreached_breakpoint_prob:
        return rng.choice(future)
    return rng.randint(1, max(1, len(program.lines)))


def sample_forward(
    program: Program, result: TraceResult, rng: random.Random, config: SamplerConfig | None = None
) -> Steps:
    config = config or SamplerConfig()
    calls = [e.index for e in result.events if e.event == "call"]
    if calls and rng.random() < config.sub_entry_prob:
        result = sub_trace(result, rng.choice(calls))
    mdp = TraceMDP(result)
    policy = POLICY_A if rng.random() < 0.5 else POLICY_B
    position, bdb = mdp.start_position("entry"), BdbState()
    steps: Steps = []
    state = mdp.state(position)
    for _ in range(config.max_steps):
        if state.exit is not None:
            break
        kind = _choose(rng, policy)
        lines = (_breakpoint_line(rng, mdp, position, program, config),) if kind == "breakpoint" else ()
        action = Action(kind=kind, lines=lines)  # type: ignore[arg-type]
        steps.append((state, action))
        position, stdout = mdp.step(position, action, bdb=bdb)
        state = mdp.state(position, stdout=stdout)
    steps.append((state, None))
    return steps


def sample_inverse(
    program: Program, result: TraceResult, rng: random.Random, config: SamplerConfig | None = None
) -> Steps:
    config = config or SamplerConfig()
    mdp = TraceMDP(result)
    # drawn only when asked for, so that builds without input jumps keep their random streams
    if config.input_jump_prob and rng.random() < config.input_jump_prob:
        jump = input_jump(program, result, mdp)
        if jump:
            return jump
    if rng.random() < config.inverse_from_end_prob:
        position = mdp.start_position("exit")
    else:
        position = rng.randrange(0, max(1, len(mdp.nodes) - 1))
    steps: Steps = []
    state = mdp.state(position)
    if state.event == "return" and config.hide_start_locals_prob and rng.random() < config.hide_start_locals_prob:
        state = state.model_copy(update={"locals": {}})  # only the value (the output) is known
    for _ in range(config.max_steps):
        if position == 0:
            break
        action = Action(kind=_choose(rng, POLICY_INVERSE))  # type: ignore[arg-type]
        steps.append((state, action))
        position, _ = mdp.step(position, action)
        state = mdp.state(position)
    steps.append((state, None))
    return steps


def input_jump(program: Program, result: TraceResult, mdp: TraceMDP) -> Steps:
    """[(the entry's return with only its value known, inv_step_call), (the call, None)], the start written
    as input inference writes it (engine/infer.py, `known_return`): on the last return line that can
    return the value (program.return_line: which return ran is not known), no locals, no output. [] when the trace does not end with the entry
    function's own return (an exception, a script without an entry call)."""
    if result.exit != "normal":  # it raised: there is no return value to start from
        return []
    position = mdp.start_position("exit")
    end = mdp.state(position)
    if end.event != "return" or end.depth != 0 or end.function is None or position == 0:
        return []
    try:
        line: int | None = return_line(program.source, end.function, end.value or "")
    except ProgramError:  # a method or a nested function as the entry: keep the line that ran
        line = end.line
    lines = program.lines
    if line is None or not 1 <= line <= len(lines):
        return []
    start = end.model_copy(update={
        "line": line, "source": lines[line - 1], "locals": {}, "stdout": "",
        "stack": [StackFrame(function=end.function, line=line)],
    })
    action = Action(kind="inv_step_call")
    call, _ = mdp.step(position, action)
    return [(start, action), (mdp.state(call), None)]


def hidden_entry(entry: str) -> str:
    """The entry call with its arguments left out, `f(1, 2)` -> `f(...)`: when the inputs are what is
    asked for (CruxEval's input task), the call in the header must not give them away."""
    name = entry.split("(", 1)[0].strip()
    return f"{name}(...)" if "(" in entry and name.isidentifier() else entry


def hides_inputs(steps: Steps) -> bool:
    """Whether an inverse trajectory starts at the entry's return with the locals hidden, as
    `sample_inverse` does with `hide_start_locals_prob`: then only the output is known."""
    start = steps[0][0]
    return start.event == "return" and start.depth == 0 and not start.locals


def training_segments(program: Program, steps: Steps, inverse: bool, version: int = fmt.FORMAT_VERSION,
                      shown: frozenset[int] | None = None) -> list[tuple[str, bool]]:
    """The serialized trajectory as (text, trained) pieces: the loss covers predicted frames only.

    The header (in format `version`, showing the lines `shown` of a program view, or all), the first
    (given) state and every action are context; each later frame, up to and including its stop token,
    is a target.
    """
    segments: list[tuple[str, bool]] = [(fmt.serialize_header(program, version, shown), False)]
    prev: State | None = None
    for i, (state, action) in enumerate(steps):
        segments.append((fmt.frame_target(state, prev, inverse), i > 0))
        if action is not None:
            segments.append((fmt.serialize_action(action), False))
        prev = state
    return segments


CHARS_PER_TOKEN = 3  # how a build prices a header line before any tokenizer exists (code runs 3-4)


def training_records(program: Program, steps: Steps, inverse: bool, version: int = fmt.FORMAT_VERSION,
                     header_tokens: int | None = None) -> list[list[tuple[str, bool]]]:
    """The trajectory as the model meets it in a session whose header holds `header_tokens` tokens of
    the program (None: the whole program, one record). A program that does not fit is shown through
    program views chosen as the engines choose them (model_backend.view): where a state falls outside
    the view, the engine starts a fresh context at it with a new view, so the trajectory is cut there
    into a new record that begins with the new header and that state as its given first frame."""
    if header_tokens is None:
        return [training_segments(program, steps, inverse, version)]
    lines = fmt.header_lines(program)

    def cost(n: int) -> int:
        return -(-len(lines[n - 1]) // CHARS_PER_TOKEN) if 0 < n <= len(lines) else 0

    budget = header_tokens
    records: list[list[tuple[str, bool]]] = []
    start = 0
    current: ProgramView | None = None
    for i, (state, _) in enumerate(steps):
        if current is None or not current.covers(program.source, state, budget, cost):
            if current is not None and i > start:
                part = [*steps[start:i], (state, None)]  # ends at the state the next record starts from
                records.append(training_segments(program, part, inverse, version, current.lines))
            current = choose_view(program.source, state, budget, cost)
            start = i
    if current is not None and len(steps) - start >= 2:
        records.append(training_segments(program, steps[start:], inverse, version, current.lines))
    return records


def prompt_target_pairs(program: Program, steps: Steps, inverse: bool) -> list[tuple[str, str, Action]]:
    """(prompt, target, action) for each transition: prompt ends with the action, target is the next frame."""
    segments = training_segments(program, steps, inverse)
    pairs = []
    prefix = segments[0][0] + segments[1][0]
    k = 2
    for i in range(len(steps) - 1):
        action = steps[i][1]
        assert action is not None
        prefix += segments[k][0]
        target = segments[k + 1][0]
        pairs.append((prefix, target, action))
        prefix += target
        k += 2
    return pairs


def horizon(before: State, after: State) -> int:
    """How many recorded events a transition moves over (1 for a plain step)."""
    if before.index is None or after.index is None:
        return 1
    return max(1, abs(after.index - before.index))

