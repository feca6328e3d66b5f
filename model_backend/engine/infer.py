"""Which arguments make a function return a given value? Propose backwards, check forwards.

The model's inverse jump from a return to its call (inv_step_call) is its weakest prediction: the
arguments are a guess that no rule can compute. Its forward steps are its strongest: single steps that
the grammar checks and, over builtins, computes. So inference is generate and test:

1. Propose: from the known return state, the greedy inverse jump, then `samples` sampled ones; with
   `walks`, also the call state that an inverse walk reaches (inv_step_over from the return, one predicted
   step back at a time: each step is a short inverse prediction, where the jump is one long one).
   Distinct argument lists of literals, written as repr writes them, the greedy jump first, then the
   walk's, then by how many draws proposed them.
2. Check: run each of the first `checks` proposals forward, from the call `f(<arguments>)` to its return
   with a followed step_return (engine/follow.py). A proposal is confirmed when the predicted return
   value equals the known one (compared as Python literals).
3. Edit while nothing is confirmed: checked argument lists are changed a little (a number by one, an
   item or a character dropped, a value replaced by the known return value in its type), and checked
   the same way, up to `edits` of them: a best-first local search with the model as the simulator.
   The known value in place of an argument goes first, then the edits of the list whose predicted
   return reads closest to the known value.
4. Pick the first confirmed argument list, or the greedy proposal when none is confirmed.

Nothing is run: both directions are the model's predictions (neural mode runs no code). `width`
forward runs go side by side, one forward pass per round for all of them (neural.Together), and a new
one joins as soon as one ends: on this CPU a pass costs about the same for one session as for several,
so keeping it full is what makes the search fast.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import heapq
import itertools
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator
from typing import Any

from pydantic import BaseModel

from model_backend import safe_ast
from model_backend.engine.base import Cancelled, Engine, EngineError, StepwiseEngine
from model_backend.program import Program, ProgramError
from model_backend.program import return_line as program_return_line
from model_backend.program import return_lines as program_return_lines
from model_backend.sampler import hidden_entry
from model_backend.state import Action, StackFrame, State

DEFAULT_SAMPLES = 8  # sampled inverse jumps besides the greedy one
DEFAULT_CHECKS = 8  # proposals run forward
DEFAULT_EDITS = 24  # edited argument lists checked at most, while nothing is confirmed
DEFAULT_WIDTH = 8  # forward runs side by side
DEFAULT_WALKS = 1  # inverse walks proposing arguments (0 or 1)
MAX_WALK_STEPS = 64  # predicted steps back an inverse walk takes at most to reach the call


class Proposal(BaseModel):
    """One argument list the inverse model proposed, and what the forward run made of it."""

    arguments: str  # as written in a call: "'abc', [1, 2]"
    votes: int  # draws (greedy and sampled) that proposed it
    greedy: bool = False
    walked: bool = False  # an inverse walk proposed it
    edit_of: str | None = None  # the argument list this one was edited from (None: the model proposed it)
    predicted_return: str | None = None  # the forward run's return value (None: not checked, or no return)
    confirmed: bool = False
    problem: str | None = None  # why the forward run gave no return value


class Inference(BaseModel):
    function: str
    returned: str  # the known return value
    arguments: str | None  # the pick (None: the model proposed nothing usable)
    confirmed: bool  # the pick's forward run returns `returned`
    proposals: list[Proposal]


def return_lines(source: str, function: str) -> list[int]:
    """program.return_lines, with EngineError for a program that has no such function."""
    try:
        return program_return_lines(source, function)
    except ProgramError as exc:
        raise EngineError(str(exc)) from None


def same_value(a: str, b: str) -> bool:
    """Two reprs name equal values (`==`, as an assert would compare them); text when not literals."""
    try:
        return bool(safe_ast.literal_eval(a) == safe_ast.literal_eval(b))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return a.strip() == b.strip()


def signature(source: str, function: str) -> ast.arguments:
    """The parameters of the top-level `function` (return_lines has checked that it exists)."""
    return next(n for n in safe_ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function).args


def call_arguments(bound: dict[str, str], params: ast.arguments) -> str | None:
    """The argument list that binds the parameters to the values (reprs) a call state shows:
    positional ones in order, `*args` unpacked, keyword-only ones and `**kwargs` by name. None unless
    the state binds exactly the function's parameters."""
    positional = [a.arg for a in [*params.posonlyargs, *params.args]]
    star = [params.vararg.arg] if params.vararg else []
    keywords = [a.arg for a in params.kwonlyargs]
    double = [params.kwarg.arg] if params.kwarg else []
    if list(bound) != positional + star + keywords + double:
        return None
    if not all(_one_value(bound[name]) for name in positional + star + keywords):
        return None  # a value such as `'a', 'b'` (a tuple without its parentheses) would pass two
    parts = [bound[name] for name in positional] + [f"*{bound[name]}" for name in star]
    parts += [f"{name}={bound[name]}" for name in keywords]
    for name in double:
        try:
            extra = safe_ast.literal_eval(bound[name])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if not isinstance(extra, dict) or not all(isinstance(k, str) and k.isidentifier() for k in extra):
            return None
        parts += [f"{key}={value!r}" for key, value in extra.items()]
    return ", ".join(parts)


def _one_value(text: str) -> bool:
    """Whether `text`, written between a call's parentheses, is one argument."""
    try:
        call = safe_ast.parse(f"f({text})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords
            and not isinstance(call.args[0], ast.Starred))


def _arguments(state: State, function: str, params: ast.arguments) -> str | None:
    """The argument list of a predicted call state, written as Python writes it (None for a state that
    is not that call, or whose values are not all literals: no call could pass them)."""
    if state.error or state.event != "call" or state.function != function:
        return None
    text = call_arguments(state.locals, params)
    return None if text is None else literal_arguments(text)


def literal_arguments(arguments: str) -> str | None:
    """`arguments` with each value as repr() writes it, or None where one is not a Python literal.

    A sampled call state can hold a value no call could pass (`{'a': 'b': 1}`, cut text): its forward
    run would fail at once, taking a check from a proposal that can succeed. Writing values as repr
    does (`{'e': 3, 'e': 2}` is `{'e': 2}`, `[1,2]` is `[1, 2]`) also lets the draws that proposed the
    same values vote together."""
    try:
        call = safe_ast.parse(f"f({arguments})", mode="eval").body
        if not isinstance(call, ast.Call):
            return None
        parts = [f"*{_repr_of(a.value)}" if isinstance(a, ast.Starred) else _repr_of(a) for a in call.args]
        for keyword in call.keywords:
            value = _repr_of(keyword.value)
            parts.append(f"{keyword.arg}={value}" if keyword.arg else f"**{value}")
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ", ".join(parts)


def _repr_of(node: ast.expr) -> str:
    """The repr of a literal node, itself a literal (`1e400` is `inf`, which is not): else ValueError."""
    text = repr(ast.literal_eval(node))  # a node safe_ast parsed: nothing left to guard
    safe_ast.literal_eval(text)
    return text


def known_return(program: Program, function: str, returned: str) -> State:
    """The state an inference starts from: `function` returning `returned` on the last of its return
    lines that can return it (program.return_line)."""
    try:
        line = program_return_line(program.source, function, returned)
    except ProgramError as exc:
        raise EngineError(str(exc)) from None
    return State(
        event="return", line=line, function=function, source=program.lines[line - 1], value=returned,
        stack=[StackFrame(function=function, line=line)], depth=0,
    )


def propose(engine: Engine, source: str, function: str, returned: str, samples: int, walks: int = 0,
            stop: Callable[[], bool] | None = None) -> list[Proposal]:
    """Distinct argument lists from the greedy inverse jump, `samples` sampled ones and `walks` (0 or 1)
    inverse walks, ranked. `stop()` true ends a walk early (a deadline, a cancel)."""
    program = Program(source=source, path="<infer>", entry=hidden_entry(f"{function}()"))
    known = known_return(program, function, returned)
    params = signature(source, function)
    jump = Action(kind="inv_step_call")
    engine.start(program, at="exit", known_exit=known)
    greedy = _arguments(engine.step(jump), function, params)
    drawn: list[str] = []
    if samples > 0:
        sample = getattr(engine, "sample", None)
        if sample is None:
            raise EngineError(f"the {engine.name} engine cannot sample predictions: ask for 0 samples")
        engine.start(program, at="exit", known_exit=known)
        drawn = [a for s in sample(jump, samples) if (a := _arguments(s, function, params)) is not None]
    walked = walk_back(engine, program, known, function, params, stop) if walks > 0 else None
    votes = Counter(drawn)
    for proposed in (greedy, walked):
        if proposed is not None:
            votes[proposed] += 1
    # stable: ties keep the order drawn
    ranked = sorted(votes, key=lambda a: (a != greedy, a != walked, -votes[a]))
    return [Proposal(arguments=a, votes=votes[a], greedy=a == greedy, walked=a == walked) for a in ranked]


def walk_back(engine: Engine, program: Program, known: State, function: str, params: ast.arguments,
              stop: Callable[[], bool] | None = None) -> str | None:
    """The argument list of the call state an inverse walk reaches: from the known return, inv_step_over
    until `function`'s call at depth 0, at most MAX_WALK_STEPS predictions. None when the walk fails,
    stalls (the same state twice) or does not get there."""
    state = engine.start(program, at="exit", known_exit=known)
    for _ in range(MAX_WALK_STEPS):
        if stop is not None and stop():
            return None
        previous, state = state, engine.step(Action(kind="inv_step_over"))
        if state.error or state == previous:
            return None
        if state.event == "call" and state.depth == 0:
            return _arguments(state, function, params)
    return None


def _forward_run(engine: StepwiseEngine, program: Program) -> Generator[Any, Any, State]:
    """From the call to its return: the start, then one (followed) step_return."""
    yield from engine.start_steps(program)
    return (yield from engine.step_steps(Action(kind="step_return")))


class _OneAtATime:
    """Forward runs on engines that cannot share forward passes (e.g. the oracle): `finished` runs the
    first one added. The same interface as neural.Together, over (engine, program) pairs."""

    def __init__(self, deadline: float | None, cancel: threading.Event | None = None) -> None:
        self.deadline = deadline
        self.cancel = cancel
        self._jobs: dict[Any, tuple[Engine, Program]] = {}

    def __len__(self) -> int:
        return len(self._jobs)

    def add(self, key: Any, engine: Engine, program: Program) -> None:
        self._jobs[key] = (engine, program)

    def finished(self) -> list[tuple[Any, State | EngineError]]:
        if not self._jobs:
            return []
        key = next(iter(self._jobs))
        engine, program = self._jobs.pop(key)
        if self.cancel is not None and self.cancel.is_set():
            return [(key, Cancelled("the prediction was cancelled"))]
        if self.deadline is not None and time.monotonic() > self.deadline:
            return [(key, EngineError("the prediction ran past its time limit"))]
        try:
            engine.start(program)
            return [(key, engine.step(Action(kind="step_return")))]
        except EngineError as exc:
            return [(key, exc)]

    def abandon(self, keys: list[Any]) -> None:
        for key in keys:
            self._jobs.pop(key, None)

    def running(self) -> list[Any]:
        return list(self._jobs)


class _Checker:
    """Forward runs of argument lists, side by side where the engine allows: start one, collect the
    finished ones with what each returned."""

    def __init__(self, engine_factory: Any, source: str, function: str, returned: str,
                 deadline: float | None, cancel: threading.Event | None = None,
                 on_checked: Callable[[Proposal], None] | None = None) -> None:
        from model_backend.engine.neural import NeuralEngine, Together

        self.factory, self.source, self.function, self.returned = engine_factory, source, function, returned
        self.deadline, self.cancel, self.on_checked = deadline, cancel, on_checked
        self.together: Any = Together(deadline, cancel)
        self.one_at_a_time = _OneAtATime(deadline, cancel)
        self.engines: dict[int, Any] = {}
        self.proposals: dict[int, Proposal] = {}
        self._neural_type = NeuralEngine

    def __len__(self) -> int:
        return len(self.proposals)

    def expired(self) -> bool:
        """Past the deadline, or cancelled: start no more runs."""
        return self.cancelled() or (self.deadline is not None and time.monotonic() > self.deadline)

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def start(self, key: int, proposal: Proposal) -> None:
        program = Program(source=self.source, path="<infer>", entry=f"{self.function}({proposal.arguments})")
        engine = self.factory()
        self.engines[key], self.proposals[key] = engine, proposal
        if isinstance(engine, self._neural_type):
            self.together.add(key, engine, _forward_run(engine, program))
        else:
            self.one_at_a_time.add(key, engine, program)

    def finished(self) -> list[tuple[int, Proposal]]:
        """Wait for at least one run to end; each ended proposal with its predicted return filled in."""
        ends = self.one_at_a_time.finished() if len(self.one_at_a_time) else self.together.finished()
        out = []
        for key, end in ends:
            proposal = self.proposals.pop(key)
            self.engines.pop(key).close()
            _record(proposal, end, self.function, self.returned)
            if self.on_checked is not None and not isinstance(end, Cancelled):
                self.on_checked(proposal)
            out.append((key, proposal))
        return out

    def abandon(self, keys: list[int]) -> None:
        """Stop these runs where they are; their proposals stay unchecked."""
        self.together.abandon(keys)
        self.one_at_a_time.abandon(keys)
        for key in keys:
            self.proposals.pop(key, None)
            engine = self.engines.pop(key, None)
            if engine is not None:
                engine.close()

    def running(self) -> list[int]:
        return list(self.proposals)


def _record(proposal: Proposal, end: State | EngineError, function: str, returned: str) -> None:
    if isinstance(end, EngineError):
        proposal.problem = str(end)
    elif end.error or end.event != "return" or end.depth != 0 or end.value is None:
        proposal.problem = end.error or f"the run stopped at a {end.event} event, not {function}'s return"
    else:
        proposal.predicted_return = end.value
        proposal.confirmed = same_value(end.value, returned)


def check(engine_factory: Any, source: str, function: str, returned: str, proposals: list[Proposal],
          deadline: float | None = None) -> None:
    """Run each proposal forward on a session of its own and fill in what it returns.

    `engine_factory()` gives a fresh session; neural sessions of one model run side by side. A run not
    finished when time.monotonic() passes `deadline` is abandoned (its proposal says so)."""
    checker = _Checker(engine_factory, source, function, returned, deadline)
    for key, proposal in enumerate(proposals):
        checker.start(key, proposal)
    while checker:
        checker.finished()


def infer_arguments(engine: Engine, source: str, function: str, returned: str,
                    samples: int = DEFAULT_SAMPLES, checks: int = DEFAULT_CHECKS, edits: int = DEFAULT_EDITS,
                    width: int = DEFAULT_WIDTH, engine_factory: Any = None, seed: int = 0,
                    deadline: float | None = None, cancel: threading.Event | None = None,
                    on_checked: Callable[[Proposal], None] | None = None, walks: int = DEFAULT_WALKS) -> Inference:
    """The arguments of `function` that make it return `returned`, as the model infers them.

    `engine` proposes; the checks run on sessions from `engine_factory` (default: new sessions of the
    same model), `width` at a time. With `checks=0` the pick is the greedy inverse jump, unchecked.
    `walks=1` adds the proposal of an inverse walk (propose).
    Once time.monotonic() passes `deadline`, the forward runs under way are abandoned. Setting `cancel`
    (from another thread) stops it within one forward pass with Cancelled. `on_checked` is called with
    each proposal whose forward run ends (for progress reports)."""
    try:
        wanted = safe_ast.literal_eval(returned)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise EngineError(f"the return value must be a Python literal: {returned!r}") from None
    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    def stop() -> bool:
        return cancelled() or (deadline is not None and time.monotonic() > deadline)

    proposals = propose(engine, source, function, returned, samples, walks, stop)
    if checks > 0 and proposals and not cancelled():
        checker = _Checker(engine_factory or new_sessions(engine), source, function, returned, deadline,
                           cancel, on_checked)
        proposals += _search(checker, proposals[:checks], returned, wanted, edits, max(1, width),
                             random.Random(seed))
    if cancelled():
        raise Cancelled("the inference was cancelled")
    pick = next((p for p in proposals if p.confirmed), proposals[0] if proposals else None)
    return Inference(function=function, returned=returned, arguments=pick.arguments if pick else None,
                     confirmed=bool(pick and pick.confirmed), proposals=proposals)


def _search(checker: _Checker, proposed: list[Proposal], returned: str, wanted: object, edits_budget: int,
            width: int, rng: random.Random) -> list[Proposal]:
    """Best-first search, `width` forward runs at a time: the model's proposals in their rank, then
    edits of the checked argument lists: those that pass the known value in place of an argument
    (returned_as_argument), then the others, each tier those of the list whose predicted return reads
    closest to the known value first. A run joins as soon as another ends, so the forward passes stay full. It stops
    at the first confirmed list, once the runs of better-ranked proposals still under way have ended
    (one of them may be confirmed too and wins); at `edits_budget` edits, or when nothing is left to
    try. The edits that were checked, in the order they started."""
    queue: list[tuple[tuple[int, float, int], int, Proposal]] = []
    order = itertools.count()
    for rank, proposal in enumerate(proposed):
        heapq.heappush(queue, ((0, 0.0, rank), next(order), proposal))
    seen = {p.arguments for p in proposed}
    priority: dict[int, tuple[int, float, int]] = {}
    edited: list[Proposal] = []
    best: tuple[int, float, int] | None = None  # the priority of the best confirmed list so far
    while True:
        while best is None and len(checker) < width and queue and not checker.expired():
            place, key, proposal = heapq.heappop(queue)
            if proposal.edit_of is not None:
                if len(edited) >= edits_budget:
                    queue.clear()
                    break
                edited.append(proposal)
            priority[key] = place
            checker.start(key, proposal)
        if not checker:
            break
        for key, proposal in checker.finished():
            if proposal.confirmed:
                best = min(best or priority[key], priority[key])
            elif best is None:
                near = closeness(proposal.predicted_return, returned)
                children = edits(proposal.arguments, wanted, rng)
                rng.shuffle(children)
                # the known value passed in place of one argument first: a function that returns an
                # argument, or an argument a little changed, is common, and no other edit can find it
                given = set(returned_as_argument(proposal.arguments, wanted))
                for child in children:
                    if child not in seen:
                        seen.add(child)
                        tier = 1 if child in given else 2
                        heapq.heappush(queue, ((tier, -near, next(order)), next(order),
                                               Proposal(arguments=child, votes=0, edit_of=proposal.arguments)))
        if best is not None:
            checker.abandon([key for key in checker.running() if priority[key] > best])
    return [p for p in edited if p.predicted_return is not None or p.problem is not None]


# ---- edits: the neighbours of an argument list ------------------------------------------------------


def closeness(predicted: str | None, returned: str) -> float:
    """1 for the known value, else how alike the two reprs read (0: no return predicted)."""
    if predicted is None:
        return 0.0
    if same_value(predicted, returned):
        return 1.0
    return difflib.SequenceMatcher(None, predicted, returned, autojunk=False).ratio()


def edits(arguments: str, wanted: object, rng: random.Random) -> list[str]:
    """Argument lists one small change away: one positional or keyword argument (a literal) replaced by
    a neighbouring value (value_edits). Others (a `*args`) are kept as they are."""
    return _one_argument_changed(arguments, lambda value: value_edits(value, wanted, rng))


def returned_as_argument(arguments: str, wanted: object) -> list[str]:
    """The edits that pass the known return value, or that value in the argument's type, in place of
    one argument (as_argument)."""
    return _one_argument_changed(arguments, lambda value: as_argument(wanted, value))


def _one_argument_changed(arguments: str, new_values: Callable[[object], list[object]]) -> list[str]:
    try:
        call = safe_ast.parse(f"f({arguments})", mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(call, ast.Call):
        return []
    slots: list[ast.expr] = [*call.args, *(k.value for k in call.keywords)]
    out: list[str] = []
    for slot in slots:
        if isinstance(slot, ast.Starred):
            continue
        try:
            value = ast.literal_eval(slot)  # a node safe_ast parsed: nothing left to guard
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        for new in new_values(value):
            text = _render(call, slot, new)
            if text is not None and text not in out:
                out.append(text)
    return out


def as_argument(wanted: object, value: object) -> list[object]:
    """The known return value `wanted` as a value of `value`'s type, where it reads as one: itself, a
    number written as a string or a string of digits read as a number, a list as a tuple or the other
    way, a string as its list of characters or a list of strings joined (functions that convert what
    they are given are common). Empty where `wanted` is `value` already."""
    out: list[object] = []
    if type(wanted) is type(value):
        out.append(wanted)
    elif isinstance(value, str) and type(wanted) in (int, float):
        out.append(str(wanted))
    elif type(value) is int and isinstance(wanted, str) and wanted.strip().lstrip("+-").isdigit():
        with contextlib.suppress(ValueError):
            out.append(int(wanted))
    elif isinstance(value, list) and isinstance(wanted, tuple | str):
        out.append(list(wanted))
    elif isinstance(value, tuple) and isinstance(wanted, list):
        out.append(tuple(wanted))
    elif isinstance(value, str) and isinstance(wanted, list) and all(isinstance(w, str) for w in wanted):
        out.append("".join(wanted))
    return [v for v in out if v != value]


def _render(call: ast.Call, slot: ast.expr, new: object) -> str | None:
    try:
        replacement = safe_ast.parse(repr(new), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    parts = []
    for node in call.args:
        parts.append(ast.unparse(replacement) if node is slot else ast.unparse(node))
    for kw in call.keywords:
        value = ast.unparse(replacement) if kw.value is slot else ast.unparse(kw.value)
        parts.append(f"{kw.arg}={value}" if kw.arg else f"**{value}")
    return ", ".join(parts)


def value_edits(value: object, wanted: object, rng: random.Random) -> list[object]:
    """Values near `value`, of its type: a number one off, zero or negated; a string, list or tuple with
    one item dropped, doubled or changed (recursively, for one item drawn), reversed or sorted; a dict
    without one key; a bool flipped. The known return value `wanted` in `value`'s type (as_argument),
    and reversed, are candidates too (a function that returns its argument changed a little is common)."""
    out: list[object] = as_argument(wanted, value)
    if type(wanted) is type(value) and isinstance(wanted, str | list | tuple):
        out.append(wanted[::-1])
    if isinstance(value, bool):
        out.append(not value)
    elif isinstance(value, int | float):
        out += [value + 1, value - 1, 0, -value]
    elif isinstance(value, str | list | tuple):
        out += _sequence_edits(value, wanted, rng)
    elif isinstance(value, dict) and value:
        key = rng.choice(list(value))
        out.append({k: v for k, v in value.items() if k != key})
    elif isinstance(value, set | frozenset) and value:
        out.append(type(value)(sorted(value, key=repr)[1:]))
    return [v for v in out if v != value or type(v) is not type(value)]


def _sequence_edits(value: str | list[Any] | tuple[Any, ...], wanted: object, rng: random.Random) -> list[object]:
    items = list(value)
    build: Any = "".join if isinstance(value, str) else type(value)
    out: list[object] = []
    if items:
        i = rng.randrange(len(items))
        out.append(build(items[:i] + items[i + 1:]))  # one dropped
        out.append(build(items[:i + 1] + items[i:]))  # one doubled
        out.append(build(items[::-1]))
        if not isinstance(value, str):
            out += [build(items[:i] + [new] + items[i + 1:]) for new in value_edits(items[i], wanted, rng)[:3]]
            with contextlib.suppress(TypeError):  # items of types that do not compare
                out.append(build(sorted(items)))
    elif isinstance(wanted, list | tuple | str) and wanted:
        out.append(build([rng.choice(list(wanted))]) if not isinstance(value, str) else str(rng.choice(list(wanted))))
    return out


def new_sessions(engine: Engine) -> Any:
    """A factory of new sessions of `engine`'s model, with its settings (EngineError for other engines)."""
    from model_backend.engine.neural import NeuralEngine

    if isinstance(engine, NeuralEngine):
        def session() -> NeuralEngine:
            new = NeuralEngine(engine.m)
            new.follow(engine.follow_steps)
            new.search_branches = engine.search_branches
            return new

        return session
    raise EngineError(f"checking proposals needs new sessions of the {engine.name} engine: pass engine_factory")
