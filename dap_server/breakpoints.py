"""Breakpoints: which lines can stop, where a requested line is moved, and when a breakpoint fires.

A line is executable when a statement starts on it and the compiler emits code for that line (so a
docstring, `global x` or a blank line is not). A breakpoint on any other line moves to the next
executable line of the same scope (function, class body or module); when the scope has none left
it is returned unverified with the reason.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field

from dap_server.evaluator import EvalError, Evaluator, interpolate
from model_backend import safe_ast
from model_backend.program import Program


@dataclass
class LineMap:
    """Static facts about a program's lines."""

    executable: frozenset[int]
    scope_of: dict[int, int]  # line -> id of its innermost def/class scope (0 = module)
    scope_name: dict[int, str]
    line_count: int

    @classmethod
    def from_source(cls, source: str, filename: str = "<program>") -> LineMap:
        try:
            tree = safe_ast.parse(source, filename=filename)
        except (SyntaxError, ValueError):
            return cls(frozenset(), {}, {0: "module"}, len(source.splitlines()))
        starts: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                starts.add(node.lineno)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    starts.update(d.lineno for d in node.decorator_list)
        try:
            code_lines = Program(source=source, path=filename).code_lines()
        except (SyntaxError, ValueError):
            code_lines = frozenset(starts)
        # Every line with bytecode can raise a line event, including the continuation lines of a
        # multi-line statement (CPython reports them; debugpy verifies breakpoints there too).
        executable = frozenset(code_lines) or frozenset(starts)
        line_count = len(source.splitlines())
        scope_of = {n: 0 for n in range(1, line_count + 1)}
        scope_name = {0: "module"}
        scopes: list[tuple[int, int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                end = node.end_lineno or node.lineno
                scopes.append((node.lineno, end, id(node), f"{kind} {node.name}"))
        # Outer scopes first, so inner ones overwrite: the body (after the header line) belongs to it.
        for start, end, ident, name in sorted(scopes, key=lambda s: (s[0], -s[1])):
            scope_name[ident] = name
            for n in range(start + 1, end + 1):
                scope_of[n] = ident
        return cls(executable, scope_of, scope_name, line_count)

    def resolve(self, line: int) -> tuple[int | None, str | None]:
        """(the line a breakpoint requested at `line` binds to, or None; a message when moved or refused)."""
        if line < 1:
            return None, f"line {line} is not a line of the program"
        if line > self.line_count:
            return None, f"line {line} is past the end of the program ({self.line_count} lines)"
        if line in self.executable:
            return line, None
        scope = self.scope_of.get(line, 0)
        for candidate in range(line + 1, self.line_count + 1):
            if candidate in self.executable and self.scope_of.get(candidate, 0) == scope:
                return candidate, f"moved from line {line} (no code there) to line {candidate}"
        where = self.scope_name.get(scope, "module")
        return None, f"line {line} has no code and no later line of the {where} can stop"


_HIT_RE = re.compile(r"^\s*(==|>=|<=|>|<|%)?\s*(\d+)\s*$")


def parse_hit_condition(text: str | None) -> tuple[str, int] | None:
    """`5`, `==5`, `>5`, `>=5`, `<5`, `<=5`, `%5` (as debugpy reads them). Raises ValueError otherwise."""
    if text is None or not text.strip():
        return None
    m = _HIT_RE.match(text)
    if not m:
        raise ValueError(f"unsupported hit condition {text!r} (use N, ==N, >N, >=N, <N, <=N or %N)")
    op, n = m.group(1) or "==", int(m.group(2))
    if op == "%" and n == 0:
        raise ValueError("hit condition %0 divides by zero")
    return op, n


def _hit_ok(op: str, n: int, hits: int) -> bool:
    return {
        "==": hits == n,
        ">": hits > n,
        ">=": hits >= n,
        "<": hits < n,
        "<=": hits <= n,
        "%": hits % n == 0 if n else False,
    }[op]


@dataclass
class Breakpoint:
    id: int
    requested_line: int
    line: int | None  # the line it binds to; None when unverified
    message: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    hits: int = 0
    enabled: bool = True  # pdb's disable/enable: a disabled breakpoint is kept but never fires
    ignore: int = 0  # pdb's ignore: the next this many times its condition holds, it does not fire
    _hit: tuple[str, int] | None = field(default=None, repr=False)

    @property
    def verified(self) -> bool:
        return self.line is not None


@dataclass
class Hit:
    """What happened when execution reached a breakpoint's line."""

    stop: bool  # the breakpoint wants to stop here
    logs: list[str] = field(default_factory=list)  # log-point messages to print
    errors: list[str] = field(default_factory=list)  # condition errors (pdb stops on them, and so do we)
    ids: list[int] = field(default_factory=list)


class BreakpointTable:
    def __init__(self) -> None:
        # Writers hold it: the adapter may set breakpoints on its reading thread while a command runs on
        # the session's thread. Readers take `items` as it is: a writer swaps in a new list.
        self._lock = threading.RLock()
        self._next_id = 1
        self.items: list[Breakpoint] = []
        self.lines = LineMap(frozenset(), {}, {0: "module"}, 0)

    def set_source(self, source: str, filename: str = "<program>") -> None:
        self.lines = LineMap.from_source(source, filename)
        for bp in self.items:  # re-verify what was set before the program was known
            bp.line, bp.message = self.lines.resolve(bp.requested_line)

    def replace(self, specs: list[dict[str, object]]) -> list[Breakpoint]:
        """Set the whole list (DAP's setBreakpoints semantics). Keeps hit counts of unchanged ones."""
        with self._lock:
            return self._replace(specs)

    def _replace(self, specs: list[dict[str, object]]) -> list[Breakpoint]:
        old = {(b.requested_line, b.condition, b.hit_condition, b.log_message): b for b in self.items}
        new: list[Breakpoint] = []
        for spec in specs:
            line = int(spec["line"])  # type: ignore[call-overload]
            cond = _text(spec.get("condition"))
            hit = _text(spec.get("hitCondition"))
            log = _text(spec.get("logMessage"))
            previous = old.get((line, cond, hit, log))
            if previous is not None:
                new.append(previous)
                continue
            reserved = spec.get("id")
            new.append(self._make(line, cond, hit, log, reserved if isinstance(reserved, int) else None))
        self.items = new
        return new

    def reserve_id(self) -> int:
        """An id for a breakpoint made later (`replace` with this "id" in its spec): a client is told the
        ids of breakpoints it sets before the program is known, and later events must use the same."""
        with self._lock:
            self._next_id += 1
            return self._next_id - 1

    def add(self, line: int, condition: str | None = None, hit_condition: str | None = None,
            log_message: str | None = None, keep_refused: bool = True) -> Breakpoint:
        """Add one breakpoint. With keep_refused=False one that cannot be verified is not kept and gives
        its number back (pdb numbers only the breakpoints it sets)."""
        with self._lock:
            bp = self._make(line, _text(condition), _text(hit_condition), _text(log_message))
            if bp.verified or keep_refused:
                self.items = [*self.items, bp]
            else:
                self._next_id -= 1
            return bp

    def remove_id(self, number: int) -> None:
        self.items = [b for b in self.items if b.id != number]

    def remove_line(self, line: int | None) -> list[Breakpoint]:
        """Remove the breakpoints requested at or bound to `line` (all when None); return them."""
        gone = [b for b in self.items if line is None or line in (b.line, b.requested_line)]
        self.items = [b for b in self.items if b not in gone]
        return gone

    def _make(self, line: int, cond: str | None, hit: str | None, log: str | None,
              reserved_id: int | None = None) -> Breakpoint:
        bp = Breakpoint(id=reserved_id if reserved_id is not None else self.reserve_id(), requested_line=line,
                        line=None, condition=cond, hit_condition=hit, log_message=log)
        bp.line, bp.message = self.lines.resolve(line)
        if bp.line is not None:
            try:
                bp._hit = parse_hit_condition(hit)
            except ValueError as exc:
                bp.line, bp.message = None, str(exc)
        if bp.line is not None and cond is not None:
            try:
                safe_ast.parse(cond, mode="eval")
            except SyntaxError as exc:
                bp.line, bp.message = None, f"condition {cond!r} is not an expression: {exc.msg}"
        return bp

    def active_lines(self) -> frozenset[int]:
        return frozenset(b.line for b in self.items if b.line is not None and b.enabled)

    def at(self, line: int | None) -> list[Breakpoint]:
        return [b for b in self.items if line is not None and b.line == line and b.enabled]

    def by_id(self, number: int) -> Breakpoint | None:
        return next((b for b in self.items if b.id == number), None)

    def reached(self, line: int | None, names: dict[str, str], count: bool = True,
                attributes: dict[str, dict[str, str]] | None = None, error_stops: bool = True) -> Hit:
        """Execution reached `line` with `names` as its locals: which breakpoints fire, and logs.

        Order per breakpoint, as debugpy does: condition, then hit count, then log message. A condition
        that cannot be evaluated stops (as pdb does), with the error; with `error_stops=False` it does not
        (as debugpy: the error is reported, the breakpoint passed). With `count=False` (reverse
        execution) hit counts are neither updated nor checked and log points stay silent.
        """
        result = Hit(stop=False)
        evaluator = Evaluator(names, attributes=attributes)
        for bp in self.at(line):
            if bp.condition is not None:
                try:
                    ok = bool(evaluator.evaluate(bp.condition))
                except EvalError as exc:
                    result.errors.append(f"error in condition {bp.condition!r} of breakpoint at line {line}: {exc}")
                    ok = error_stops
                if not ok:
                    continue
            if count:
                bp.hits += 1
                if bp.ignore > 0:  # as pdb: counted as a hit, but it does not fire
                    bp.ignore -= 1
                    continue
                if bp._hit is not None and not _hit_ok(bp._hit[0], bp._hit[1], bp.hits):
                    continue
            if bp.log_message is not None:
                if count:
                    result.logs.append(interpolate(bp.log_message, names, attributes))
                continue
            result.stop = True
            result.ids.append(bp.id)
        return result


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None
