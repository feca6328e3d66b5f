"""The MCP tools and resources (`build_server`), over `sessions`, `render` and `queries`.

Every tool answers with compact text (render.py). A request the server refuses (bad arguments that pass
the schema, an unknown session, a limit, a program that does not load, an engine that cannot serve it)
is a tool error result (`isError`) whose text says what to do; arguments that fail the schema are
refused by the SDK the same way. Reading a resource of an unknown session is a protocol error.

Tools: start, step, breakpoints, continue, state, evaluate, set_variable, predict_return,
infer_inputs, compare, end. Resources: ndb://session/{id}/program, ndb://session/{id}/trajectory.
"""


from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from dap_server.evaluator import EvalError, Evaluator
from dap_server.values import show
from mcp_server import queries
from mcp_server.render import MAX_OUTPUT_CHARS, cut, program_text, state_text, trajectory_text
from mcp_server.sessions import (
    EngineConfig,
    EngineName,
    Limits,
    Session,
    SessionError,
    Sessions,
    Step,
    load_program,
)
from model_backend.engine.base import EngineError
from model_backend.program import Program
from model_backend.state import Action

T = TypeVar("T")
StepAction = Literal["step_into", "step_over", "step_return", "inv_step_into", "inv_step_over", "inv_step_call"]
SessionId = Annotated[str, Field(description="The id `start` returned.", min_length=1, max_length=64)]
Source = Annotated[str | None, Field(description="The program's text (give this or `path`).")]
ProgramPath = Annotated[str | None, Field(description="A Python file to load (give this or `source`).")]
Engine = Annotated[EngineName, Field(description="neural: the model predicts every state and runs nothing; "
                                     "oracle: the real run, in a sandbox, values exact.")]
INSTRUCTIONS = """Neural Debug: a debugger whose debuggee is a language model. `start` a session on a program
and an entry call; `step` forwards or backwards (inv_*), `continue` to breakpoints, read `state`,
`evaluate` expressions on the shown values, `set_variable` for a what-if. `predict_return` and
`infer_inputs` need no session. On the neural engine every value is a prediction (confidences shown);
`compare` checks it against the real run (oracle)."""


def _refusing(call: Callable[[], T]) -> T:
    """Run a tool body; the refusals it raises become the tool's error result."""
    try:
        return call()
    except (SessionError, EngineError, EvalError) as exc:
        raise ToolError(str(exc)) from None


def build_server(limits: Limits, engines: EngineConfig, **settings: object) -> tuple[MCPServer, Sessions]:
    """The server and its session table (the caller closes the sessions when the server stops).
    `settings` go to MCPServer (e.g. log_level)."""
    sessions = Sessions(limits, engines)
    mcp: MCPServer = MCPServer("neural-debug", instructions=INSTRUCTIONS, **settings)  # type: ignore[arg-type]

    def using(session_id: str, body: Callable[[Session], str]) -> str:
        def call() -> str:
            session = sessions.get(session_id)
            if not session.lock.acquire(timeout=limits.call_seconds):
                raise SessionError(f"session {session_id} is busy with another call")
            try:
                return body(session)
            finally:
                session.lock.release()
        return _refusing(call)

    @mcp.tool()
    def start(
        entry: Annotated[str | None, Field(description="The call to debug, e.g. `f([3, 1, 2])` (none: the module).")] = None,
        source: Source = None, path: ProgramPath = None, engine: Engine = "neural",
        breakpoints: Annotated[list[int] | None, Field(description="Breakpoint lines.")] = None,
    ) -> str:
        """Start a debugging session paused at the program's first state; answers its session id."""
        def call() -> str:
            program = load_program(source, path, entry, limits)
            lines = _code_lines(program, breakpoints or [])
            session = sessions.open(program, engine)
            session.breakpoints = lines
            return f"session {session.id} ({engine} engine)\n{state_text(session.state)}"
        return _refusing(call)

    @mcp.tool()
    def step(
        session: SessionId, action: Annotated[StepAction, Field(description="inv_*: step backwards.")] = "step_over",
        count: Annotated[int, Field(ge=1, le=limits.max_count, description="Times to repeat the action.")] = 1,
    ) -> str:
        """Apply a debugger action `count` times (pdb's rules; forward actions stop at breakpoints too)."""
        return using(session, lambda s: _steps(s, Action(kind=action), count, limits))

    @mcp.tool(name="continue")
    def resume(session: SessionId) -> str:
        """Run forwards to the next breakpoint, or to the program's end."""
        return using(session, lambda s: _steps(s, Action(kind="continue"), 1, limits))

    @mcp.tool(name="breakpoints")
    def set_breakpoints(
        session: SessionId, lines: Annotated[list[int], Field(description="All breakpoint lines (replaces the old).")],
    ) -> str:
        """Set the session's breakpoint lines; `continue` and forward steps stop on them."""
        def body(s: Session) -> str:
            s.breakpoints = _code_lines(s.program, lines)
            return f"breakpoints: {', '.join(map(str, sorted(lines))) or 'none'}"
        return using(session, body)

    @mcp.tool()
    def state(session: SessionId) -> str:
        """The current state: line, locals, stack, what the last step printed, confidences."""
        def body(s: Session) -> str:
            printed = s.trajectory[-1].output
            text = f"{s.engine_name} session, step {len(s.trajectory) - 1}\n{state_text(s.state)}"
            return text + (f"\noutput so far: {cut(repr(printed), MAX_OUTPUT_CHARS)}" if printed else "")
        return using(session, body)

    @mcp.tool()
    def evaluate(session: SessionId,
                 expression: Annotated[str, Field(max_length=2000, description="e.g. `len(xs) > 2`")]) -> str:
        """An expression on the current state's values (computed by the debugger, nothing of the program runs)."""
        return using(session, lambda s: show(_evaluator(s).evaluate(expression)))

    @mcp.tool()
    def set_variable(session: SessionId, name: str,
                     value: Annotated[str, Field(max_length=2000, description="A literal, or an expression of the shown values.")]) -> str:
        """What if `name` were `value`: later states follow from the new value."""
        def body(s: Session) -> str:
            if name not in s.state.locals:
                raise SessionError(f"no variable named {name!r} in the current frame")
            try:
                text = show(_evaluator(s).evaluate(value))
            except EvalError:
                text = value  # the oracle computes it in its sandbox; the neural engine refuses it
            with s.timed(limits.call_seconds):
                new = s.run(lambda: s.engine.set_variable(name, text))
            if new.error:
                raise SessionError(f"could not set {name}: {new.error}")
            s.record(Step(f"set {name} = {text}", new, assignment=(name, text)), limits.max_trajectory)
            return state_text(new)
        return using(session, body)

    @mcp.tool()
    def predict_return(
        call: Annotated[str, Field(description="The call, e.g. `f([1, 0])`.")],
        source: Source = None, path: ProgramPath = None, engine: Engine = "neural",
    ) -> str:
        """The call's return value or exception, with no session."""
        return _refusing(lambda: queries.predict_return(load_program(source, path, call, limits), engine, engines, limits))

    @mcp.tool()
    def infer_inputs(
        function: Annotated[str, Field(description="A top-level function of the program.")],
        returned: Annotated[str, Field(description="The wanted return value, a Python literal.", max_length=2000)],
        source: Source = None, path: ProgramPath = None,
        k: Annotated[int, Field(ge=1, le=8, description="Confirmed argument lists wanted.")] = 3,
        seconds: Annotated[float | None, Field(gt=0, description="Time limit (default: the server's per-call limit).")] = None,
    ) -> str:
        """Argument lists that make `function` return `returned`: the model proposes them backwards and
        confirms each with its own forward run (nothing runs; check with the oracle)."""
        budget = min(seconds or limits.call_seconds, limits.call_seconds)
        return _refusing(lambda: queries.infer_inputs(load_program(source, path, None, limits), function,
                                                      returned, k, budget, engines))

    @mcp.tool()
    def compare(session: SessionId,
                steps: Annotated[int, Field(ge=0, le=200, description="Actions to take on both.")] = 0,
                action: StepAction = "step_over") -> str:
        """A neural session against the real run (oracle, same actions from the start); with `steps`, both
        take that many actions and each pair of states is compared (the session moves)."""
        return using(session, lambda s: queries.compare(s, steps, Action(kind=action), engines, limits))

    @mcp.tool()
    def end(session: SessionId) -> str:
        """End the session and free what it holds."""
        return _refusing(lambda: f"ended session {session} after {len(sessions.end(session).trajectory) - 1} steps")

    def resource_session(session_id: str) -> Session:
        try:
            return sessions.get(session_id)
        except SessionError as exc:
            raise ResourceError(str(exc)) from None

    @mcp.resource("ndb://session/{session_id}/program", mime_type="text/plain")
    def program(session_id: str) -> str:
        """The session's program with line numbers (`>` the current line, `*` breakpoints)."""
        s = resource_session(session_id)
        return program_text(s.program, s.state.line, s.breakpoints)

    @mcp.resource("ndb://session/{session_id}/trajectory", mime_type="text/plain")
    def trajectory(session_id: str) -> str:
        """Every state the session reached, with the action that led there."""
        return trajectory_text([(step.what, step.state) for step in resource_session(session_id).trajectory])

    return mcp, sessions


def _code_lines(program: Program, lines: list[int]) -> frozenset[int]:
    refused = sorted(set(lines) - program.code_lines())
    if refused:
        raise SessionError(f"no code on line(s) {refused}: a breakpoint needs a line with code")
    return frozenset(lines)


def _evaluator(session: Session) -> Evaluator:
    return Evaluator(_names(session), attributes=session.engine.object_attributes())


def _names(session: Session) -> dict[str, str]:
    """What an expression may name: the locals (and the oracle's module globals, which they shadow), and
    pdb's __return__ / __exception__."""
    state = session.state
    if state.event == "exit":
        raise SessionError("the program has exited: there are no variables")
    names = {**(session.engine.module_globals() or {}), **state.locals}
    pdb_name = {"return": "__return__", "exception": "__exception__"}.get(state.event)
    if pdb_name is not None and state.value is not None:
        names[pdb_name] = state.value
    return names


def _steps(session: Session, action: Action, count: int, limits: Limits) -> str:
    """`count` actions, stopping early at the program's end, a failed prediction or a state that does not
    move (the start, when stepping back)."""
    taken, note = 0, ""
    for _ in range(count):
        before = session.state
        if before.event == "exit" and not action.is_inverse:
            note = "the program has exited: step back (inv_*) or end the session"
            break
        with session.timed(limits.call_seconds):
            new = session.run(lambda: session.engine.step(action, session.breakpoints))
        if new.error:
            note = f"prediction failed: {new.error}"
            break
        if new == before:
            note = "no earlier state" if action.is_inverse else "the state did not move"
            break
        session.record(Step(str(action), new, action, session.breakpoints), limits.max_trajectory)
        taken += 1
        if session.engine.interrupted:
            note = f"stopped after the {limits.call_seconds:g} s time limit"
            break
    head = f"{action} x{taken}" + (f" (of {count}; {note})" if note else "")
    return f"{head}\n{state_text(session.state)}"
