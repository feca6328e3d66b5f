"""The oracle engine: answers every action from a real, sandboxed trace of the program.

It is the ground truth the neural engine is measured against, and it makes the debug adapter
testable without a model. It runs the user's program, so only inside the sandbox.
"""

from __future__ import annotations

import ast

from model_backend.engine.base import CallerFrame, Engine, EngineError, StartAt
from model_backend.mdp import BdbState, TraceMDP
from model_backend.program import Program
from model_backend.sandbox import Limits, Patch, run_trace
from model_backend.state import Action, State

# A debugging session shows values whole, up to this many characters (the training data and the model's
# format cut reprs at Limits().max_repr, 200, which would leave `p len(xs)` nothing to compute with).
SESSION_MAX_REPR = 10_000


class OracleEngine(Engine):
    name = "oracle"

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits(max_repr=SESSION_MAX_REPR, record_globals=True, record_attributes=True)
        self.program: Program | None = None
        self.mdp: TraceMDP | None = None
        self.position = 0
        self.bdb = BdbState()
        self.patches: list[Patch] = []
        self._state: State | None = None

    @property
    def format_version(self) -> int:
        """3 when objects are written with their fields (`Limits.objects`), else 2."""
        return 3 if self.limits.objects else 2

    def start(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> State:
        self.program, self.patches = program, []
        result = run_trace(program, self.limits)
        if not result.events and result.exit == "error" and program.entry is not None:
            raise EngineError(f"the entry expression {program.entry!r} failed: {result.exit_reason}")
        self.mdp = TraceMDP(result)
        self.position = self.mdp.start_position(at)
        self.bdb = BdbState()
        stdout = "".join(e.stdout for e in result.events[:1])
        self._state = self.mdp.state(self.position, stdout=stdout)
        return self._state

    def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
        if self.mdp is None:
            raise EngineError("the engine has not been started")
        self.position, stdout = self.mdp.step(self.position, action, breakpoints, self.bdb)
        self._state = self.mdp.state(self.position, stdout=stdout)
        return self._state

    def goto(self, line: int) -> State:
        """pdb's jump, done by Python: the program runs again in the sandbox and, at the current line
        event, sets the frame's f_lineno (Python refuses what it cannot do, e.g. into a loop body)."""
        if self.mdp is None or self.program is None:
            raise EngineError("the engine has not been started")
        node = self.mdp.nodes[self.position]
        if node.kind != "event" or self.mdp.events[node.index].event != "line":
            raise EngineError("a jump is possible only when paused at a line (as in pdb)")
        index = node.index
        patches = [p for p in self.patches if p.index < index or (p.index == index and p.jump is None)]
        patches.append(Patch(index=index, jump=line))
        result = run_trace(self.program, self.limits, patches)
        reason = result.exit_reason or ""
        if result.exit == "error" and reason.startswith("jump refused: ") and len(result.events) <= index + 1:
            raise EngineError(f"cannot jump to line {line}: {reason.removeprefix('jump refused: ')}")
        before = self.mdp.events[index]
        if len(result.events) <= index + 1 or result.events[index + 1].frame_id != result.events[index].frame_id \
                or result.events[index].line != before.line:
            raise EngineError("the program did not reach the same point again (is it deterministic?)")
        self.patches = patches
        self.mdp = TraceMDP(result)
        self.position = self.mdp.node_of_event[index + 1]
        self._state = self.mdp.state(self.position)
        return self._state

    def limit_events(self, count: int) -> None:
        self.limits = self.limits.model_copy(update={"max_events": count})

    def module_globals(self) -> dict[str, str] | None:
        if self.mdp is None:
            return None
        node = self.mdp.nodes[self.position]
        return None if node.kind == "exit" else dict(self.mdp.events[node.index].globals)

    def object_attributes(self) -> dict[str, dict[str, str]] | None:
        if self.mdp is None:
            return None
        node = self.mdp.nodes[self.position]
        return None if node.kind == "exit" else {k: dict(v) for k, v in self.mdp.events[node.index].attributes.items()}

    def caller_frame(self, level: int) -> CallerFrame | None:
        """Exact: the last event of that frame instance (found by frame ids) before the current one.
        Objects the callees mutated since then show their values from that moment."""
        if self.mdp is None or level < 1:
            return None
        node = self.mdp.nodes[self.position]
        if node.kind == "exit":
            return None
        events = self.mdp.events
        index = node.index
        for _ in range(level):
            target = events[index].parent_id
            if target < 0:
                return None
            index = next((i for i in range(index - 1, -1, -1) if events[i].frame_id == target), -1)
            if index < 0:
                return None
        return CallerFrame(line=events[index].line, locals=dict(events[index].locals),
                           attributes={k: dict(v) for k, v in events[index].attributes.items()})

    def call_site(self) -> CallerFrame | None:
        """At a return event: the caller as it is at that moment. Its names and the values the call line
        binds come from its call-line event; when the caller's next event follows at once, the other
        names' values come from there (objects the callee changed show their new values, as debugpy
        shows them)."""
        site = self.caller_frame(1)
        if site is None or self.mdp is None or self.program is None:
            return site
        node = self.mdp.nodes[self.position]
        events = self.mdp.events
        returned = events[node.index]
        if returned.event != "return" or node.index + 1 >= len(events):
            return site
        after = events[node.index + 1]
        if after.frame_id == returned.parent_id:
            now_values, now_attributes = after.locals, after.attributes
        elif self._state is not None and len(self._state.stack) >= 2 and self._state.stack[-2].function == "<module>":
            # the caller is the module: the names the callee's code uses, as they are now
            now_values, now_attributes = returned.globals, {}
        else:
            return site
        bound = names_bound_at(self.program.source, site.line)
        now = {name: (value if name in bound else now_values.get(name, value)) for name, value in site.locals.items()}
        if after.frame_id == returned.parent_id:  # a name the caller bound since its last event (a loop variable)
            now.update({name: value for name, value in after.locals.items() if name not in bound and name not in now})
        attributes = {name: dict(site.attributes[name] if name in bound else now_attributes.get(name, fields))
                      for name, fields in site.attributes.items()}
        return CallerFrame(line=site.line, locals=now, attributes=attributes)

    def set_variable(self, name: str, value: str) -> State:
        if self.mdp is None or self.program is None:
            raise EngineError("the engine has not been started")
        node = self.mdp.nodes[self.position]
        if node.kind != "event" or self.mdp.events[node.index].event not in ("call", "line"):
            raise EngineError("variables can be set only when paused at a call or a line")
        if name not in self.state.locals:
            raise EngineError(f"no variable named {name!r} in the current frame")
        try:
            compile(value, "<value>", "eval")
        except SyntaxError as exc:
            raise EngineError(f"{value!r} is not a Python expression: {exc.msg}") from None
        index = node.index
        # Edits after this point belonged to a future that is now recomputed: drop them.
        patches = [p for p in self.patches if p.index < index or (p.index == index and p.name != name and p.jump is None)]
        patches.append(Patch(index=index, name=name, value=value))
        result = run_trace(self.program, self.limits, patches)
        if len(result.events) <= index or result.events[index].line != self.mdp.events[index].line:
            raise EngineError("the program did not reach the same point again (is it deterministic?)")
        if name not in result.events[index].locals:
            raise EngineError(f"could not set {name!r}: {result.exit_reason or 'the value did not stick'}")
        self.patches = patches
        self.mdp = TraceMDP(result)
        self.position = self.mdp.node_of_event[index]
        self._state = self.mdp.state(self.position)
        return self._state


def run_steps(program: Program, actions: list[Action], start: StartAt = "entry") -> list[dict[str, object]]:
    """What `ndb step` prints: the initial state, then the state after each action (full locals)."""
    engine = OracleEngine()
    records = [engine.start(program, start).step_record(None)]
    for action in actions:
        records.append(engine.step(action).step_record(action))
    return records


def names_bound_at(source: str, line: int) -> set[str]:
    """The names the statement at `line` binds (assignment targets, walrus, for/with targets, imports):
    at a return event into that line, they still hold their values from before it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    statement: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and (statement is None or node.lineno >= statement.lineno):
            statement = node
    if statement is None:
        return set()
    names: set[str] = set()
    header: list[ast.AST]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        header = [statement.target, statement.iter]
    elif isinstance(statement, (ast.While, ast.If)):
        header = [statement.test]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        header = list(statement.items)
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(statement.name)
        header = list(statement.decorator_list)
    elif isinstance(statement, (ast.Try, ast.TryStar, ast.Match)):
        header = []
    else:
        header = [statement]
    todo = list(header)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            continue  # their names are their own frame's (a walrus inside is rare enough to leave out)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return names
