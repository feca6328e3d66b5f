"""The questions that need no session, or a second engine beside one.

- `predict_return`: a call's return value or exception, as the engine sees it (the model predicts it;
  the oracle runs it in its sandbox).
- `infer_inputs`: argument lists that make a function return a value, proposed backwards by the model
  and confirmed by its own forward runs (model_backend.engine.infer). Nothing runs.
- `compare`: a neural session's current state beside the real one, the oracle's after the same actions
  from the start; then, with `steps`, both sessions step on together and each pair of states is compared.
"""

from __future__ import annotations

import time

from mcp_server.render import cut, state_text, where
from mcp_server.sessions import (
    EngineConfig,
    EngineName,
    Limits,
    Session,
    SessionError,
    Step,
    run_engine,
    timed,
)
from model_backend import safe_ast
from model_backend.engine.base import Engine, EngineError
from model_backend.engine.infer import Inference, Proposal, check, infer_arguments, new_sessions, same_value
from model_backend.program import Program, ProgramError, return_lines
from model_backend.state import Action, State

MAX_INFER_SHOWN = 8  # unconfirmed checked proposals listed besides the confirmed ones


def predict_return(program: Program, engine_name: EngineName, engines: EngineConfig, limits: Limits) -> str:
    """From the entry call to its return (a followed step_return), then on to the program's end, which
    tells an exception that escapes the call from a return."""
    engine = engines.create(engine_name)
    try:
        with timed(engine, limits.call_seconds):
            start = run_engine(engine, lambda: engine.start(program))
            returned = run_engine(engine, lambda: engine.step(Action(kind="step_return")))
            end = returned if returned.event == "exit" or returned.error else \
                run_engine(engine, lambda: engine.step(Action(kind="continue")))
    finally:
        engine.close()
    origin = "the model's prediction: nothing ran" if engine_name == "neural" else "the oracle ran it in its sandbox"
    call = program.entry
    if returned.error or end.error:
        return f"{call}: no prediction ({returned.error or end.error}); {origin}"
    if end.event == "exit" and end.exit == "error":
        verdict = f"raises {end.exit_reason}"
    elif returned.event == "return" and returned.depth == start.depth:
        verdict = f"returns {cut(returned.value or 'None')}"
    else:
        verdict = f"ends at: {where(returned)}"
    printed = returned.stdout + (end.stdout if end is not returned else "")
    return f"{call} {verdict}" + (f"\nprinted: {cut(repr(printed))}" if printed else "") + f"\n({origin})"


def infer_inputs(program: Program, function: str, returned: str, k: int, seconds: float,
                 engines: EngineConfig) -> str:
    """Up to `k` argument lists whose predicted run returns `returned`: the inference's pick, then the
    other proposals it did not get to, checked the same way while time is left."""
    from model_backend.engine.neural import proposer_engine

    try:  # refused before a model loads
        return_lines(program.source, function)
        safe_ast.literal_eval(returned)
    except ProgramError as exc:
        raise SessionError(str(exc)) from None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise SessionError(f"the return value must be a Python literal: {returned!r}") from None
    deadline = time.monotonic() + seconds
    engine = engines.create("neural")
    factory = (lambda: engines.create("neural")) if engine.name == "worker" else new_sessions(engine)
    proposer = proposer_engine(engine) if engine.name == "neural" else None
    try:
        def search() -> Inference:
            result = infer_arguments(proposer or engine, program.source, function, returned,
                                     engine_factory=factory, deadline=deadline)
            confirmed = [p for p in result.proposals if p.confirmed]
            unchecked = [p for p in result.proposals if p.predicted_return is None and p.problem is None]
            if len(confirmed) < k and unchecked and time.monotonic() < deadline:
                check(factory, program.source, function, returned, unchecked, deadline)
            return result

        result = run_engine(engine, search)
    except EngineError as exc:
        raise SessionError(str(exc)) from None
    finally:
        engine.close()
        if proposer is not None:
            proposer.close()
    return inference_text(result, k)


def inference_text(result: Inference, k: int) -> str:
    confirmed = [p for p in result.proposals if p.confirmed][:k]
    others = [p for p in result.proposals if not p.confirmed and (p.predicted_return or p.problem)]

    def call(p: Proposal) -> str:
        return f"{result.function}({p.arguments})"

    lines = [f"{len(confirmed)} confirmed (the model's forward run returns {cut(result.returned)}; nothing ran):"]
    lines += [f"  {call(p)}" for p in confirmed]
    if others:
        lines.append("checked, not confirmed:")
        lines += [f"  {call(p)} -> {cut(p.predicted_return or p.problem or '?', 120)}"
                  for p in others[:MAX_INFER_SHOWN]]
        if len(others) > MAX_INFER_SHOWN:
            lines.append(f"  ... and {len(others) - MAX_INFER_SHOWN} more")
    if not result.proposals:
        lines.append("the model proposed no argument list")
    return "\n".join(lines)


def differences(neural: State, oracle: State) -> list[str]:
    """What the neural state gets wrong, as `what: neural vs oracle`; [] when the two agree."""
    out = []
    for name in ("event", "line", "function", "exit"):
        a, b = getattr(neural, name), getattr(oracle, name)
        if a != b:
            out.append(f"{name}: {a} vs {b}")
    if neural.value != oracle.value and not same_value(neural.value or "None", oracle.value or "None"):
        out.append(f"value: {cut(neural.value or 'None', 80)} vs {cut(oracle.value or 'None', 80)}")
    for name in sorted(set(neural.locals) | set(oracle.locals)):
        a, b = neural.locals.get(name), oracle.locals.get(name)
        if a is None or b is None or (a != b and not same_value(a, b)):
            out.append(f"{name}: {cut(a or '(none)', 80)} vs {cut(b or '(none)', 80)}")
    return out


def replay(session: Session, oracle: Engine) -> State:
    """The oracle taken through the session's trajectory from its start: the same actions, breakpoints
    and assignments."""
    if not session.trajectory or session.trajectory[0].what != "start":
        raise SessionError("the session's trajectory is longer than the server keeps: compare needs it whole")
    state = oracle.start(session.program)
    for step in session.trajectory[1:]:
        if step.action is not None:
            state = oracle.step(step.action, step.breakpoints)
        elif step.assignment is not None:
            state = oracle.set_variable(*step.assignment)
    return state


def compare(session: Session, steps: int, action: Action, engines: EngineConfig, limits: Limits) -> str:
    """The current states of both, then `steps` actions on both (the session moves with them)."""
    if session.engine_name == "oracle":
        raise SessionError("this session runs on the oracle: its states are the real ones already")
    oracle = engines.create("oracle")
    try:
        try:
            with timed(oracle, limits.call_seconds):
                real = replay(session, oracle)
        except EngineError as exc:
            raise SessionError(f"the oracle cannot run this program here: {exc}") from None
        rows = [("now", session.state, real)]
        for i in range(steps):
            if session.state.event == "exit" or real.event == "exit":
                break
            with session.timed(limits.call_seconds):
                predicted = session.run(lambda: session.engine.step(action, session.breakpoints))
            real = oracle.step(action, session.breakpoints)
            rows.append((f"{action} #{i + 1}", predicted, real))
            if predicted.error:  # the session stays where it was
                break
            session.record(Step(str(action), predicted, action, session.breakpoints), limits.max_trajectory)
    finally:
        oracle.close()
    agree = sum(not differences(n, o) for _, n, o in rows)
    lines = [f"{agree} of {len(rows)} states agree (neural vs oracle)"]
    for label, neural, real in rows:
        diff = differences(neural, real)
        lines.append(f"{label}: " + ("agree: " + where(real) if not diff else "differ: " + "; ".join(diff)))
    if rows[-1][1].event != "exit" or rows[-1][2].event != "exit":
        lines.append("real state now:\n" + state_text(rows[-1][2]))
    return "\n".join(lines)
