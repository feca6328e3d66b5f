"""The engines that predict each next state with a model, under the trace format's grammar.

`GrammarEngine`: a stepwise engine that knows its program through the grammar's facts: it starts from
the program's text (engine/initial.py) and follows an action that runs through events in single steps
(engine/follow.py).

`FrameEngine`: what the transformers engine (engine/neural.py) and the vLLM engine
(worker/vllm_engine.py) share: a session's context (the program's header, the state the trajectory
was (re)based on, then actions and predicted frames), cut back to the header on a change of direction,
after set_variable, or when it would outgrow the model; each frame decoded token by token by
`FrameDecoder` (engine/decoding.py), with the search over its close calls. An engine supplies only how
the context is held and how the logits come: `_feed_steps`, `_crop`, `_context_len`, `_new_context`
and `_generate_frame_steps`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Generator
from typing import Any

from model_backend import trace_format as fmt
from model_backend.engine.base import StartAt, StepwiseEngine, context_frame
from model_backend.engine.decoding import (
    FrameDecoder,
    Generated,
    Vocabulary,
    default_search_branches,
    request_generator,
)
from model_backend.engine.errors import EngineError
from model_backend.engine.follow import (
    DEFAULT_FOLLOW_STEPS,
    MAX_FINISHING_JUMPS,
    MAX_SINGLE_STEPS,
    VIEW_FOLLOW_STEPS,
    breakpoint_in_reach,
    finishing_action,
    reached_stop,
    runs_through_events,
    single_step_kind,
    stop_lines,
)
from model_backend.engine.initial import initial_state
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.program import Program
from model_backend.state import Action, State
from model_backend.view import HeaderPlanner, HeaderTooLong, ProgramView

MAX_FRAME_TOKENS = 768
# Times a followed action's single steps may come back to one state before it finishes with jumps. A model
# whose prediction depends on the state alone (the context rebased at each step, as a real program's
# objects make it) goes round such a cycle until the budget is spent: 128 steps of nothing.
MAX_REVISITS = 2
ORACLE_HINT = " (the model could not predict this step; the oracle engine, --engine oracle, runs the program for exact values)"
Steps = Generator[Any, Any, Any]


class GrammarEngine(StepwiseEngine):
    """A stepwise engine with the grammar's facts of its program (`facts`, set when a program loads)."""

    facts: ProgramFacts | None = None  # of `program`
    # Single steps an action that runs through events may take before it finishes in jumps (0: one jump;
    # None: the engine's default for its program, `default_follow_steps`).
    follow_steps: int | None = None
    followed_steps = 0  # single steps taken so far to follow actions (for figures and tests)

    def follow(self, steps: int | None) -> None:
        """Set the budget of single steps (None: the engine's default for each program)."""
        if steps is not None and steps < 0:
            raise EngineError("the number of steps to follow cannot be negative")
        self.follow_steps = steps

    def default_follow_steps(self) -> int:
        """The budget when none is set: DEFAULT_FOLLOW_STEPS."""
        return DEFAULT_FOLLOW_STEPS

    def follow_budget(self) -> int:
        """The budget of single steps for the next action: the one set, else the default."""
        return self.default_follow_steps() if self.follow_steps is None else self.follow_steps

    def start_steps(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> Steps:
        """A model cannot compute the final state: at="exit" takes it from `known_exit`."""
        if at == "exit":
            if known_exit is None:
                raise EngineError("the neural engine needs the final state (e.g. the output) to start at the exit")
            state, inverse = known_exit, True
        else:
            state, inverse = initial_state(program), False
        return (yield from self.resume_steps(program, [state], inverse))

    def step_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Steps:
        """One predicted jump, or, for an action that runs through events (step_over across a call,
        step_return, continue), single steps until pdb would stop, within `follow_steps`
        (engine/follow.py). With no budget, single steps only where an IDE breakpoint may wait inside
        a call that step_over or step_return would run through."""
        if action.is_inverse or self.facts is None or self._state is None:
            return (yield from self.predict_steps(action, breakpoints))
        state = self._state
        budget = self.follow_budget()
        if budget > 0 and runs_through_events(self.facts, state, action.kind):
            if breakpoint_in_reach(self.facts, state, action.kind, breakpoints):
                budget = max(budget, MAX_SINGLE_STEPS)
            return (yield from self._followed_steps(action, breakpoints, budget, follow=True))
        if breakpoint_in_reach(self.facts, state, action.kind, breakpoints):
            return (yield from self._followed_steps(action, breakpoints, MAX_SINGLE_STEPS, follow=False))
        return (yield from self.predict_steps(action, breakpoints))

    def _followed_steps(self, action: Action, breakpoints: frozenset[int], budget: int, follow: bool) -> Steps:
        assert self.facts is not None
        start = state = self.state
        lines = stop_lines(action, breakpoints)
        printed: list[str] = []
        visits: Counter[str] = Counter()  # of each state the single steps reached
        singles = jumps = 0
        while singles < budget or jumps < MAX_FINISHING_JUMPS:
            if self.live_breakpoints is not None:  # breakpoints set since the action began count too
                breakpoints = self.live_breakpoints()
                lines = stop_lines(action, breakpoints)
            if singles < budget:
                step = Action(kind=single_step_kind(self.facts, start, state, breakpoints, follow))
                state = yield from self.predict_steps(step)
                self.followed_steps += 1
                singles += 1
                seen = state.model_dump_json(exclude={"confidence"})
                visits[seen] += 1
                if visits[seen] > MAX_REVISITS:  # the predictions go round: finish with jumps from here
                    budget = singles
            else:  # past the budget (a long loop, or a model going round): finish with jumps
                jumps += 1
                step = finishing_action(self.facts, action, state)
                state = yield from self.predict_steps(step, breakpoints)
            if state.error is not None:
                return state  # the failed state says where the prediction broke off
            printed.append(state.stdout)
            if reached_stop(action.kind, start, state, lines) or step.kind in ("continue", "breakpoint"):
                break
            if self.interrupted:  # a pause: the state reached is where the program is now
                break
        if len(printed) > 1 and any(printed):  # what the calls printed on the way, as one step shows it
            state = state.model_copy(update={"stdout": "".join(printed)})
            self.history[-1] = self._state = state
        return state


class FrameEngine(GrammarEngine):
    """A session whose model predicts frames over a context of token ids (see the module doc)."""

    max_context: int  # tokens the model reads at most
    vocabulary: Vocabulary

    def __init__(self) -> None:
        self.program: Program | None = None
        self.facts: ProgramFacts | None = None
        self.header_len = 0
        self.view = ProgramView()  # the lines of the program the header in the context shows
        self.planner: HeaderPlanner | None = None  # chooses the view of the program's header
        self.inverse = False  # the direction of the context
        self.history: list[State] = []
        self.trail: list[tuple[State, str]] = []
        self._state: State | None = None
        self.samples_drawn = 0
        self.sample_temperature = 1.0  # of sampled predictions (sample_steps): below 1 closer to greedy
        self.search_branches = default_search_branches()  # 0: plain greedy

    # ---- what an engine supplies ---------------------------------------------------------------------
    @abstractmethod
    def encode(self, text: str) -> list[int]: ...

    @abstractmethod
    def line_costs(self, program: Program) -> list[int]:
        """Tokens each program line takes in the header (index 0 is line 1)."""

    @abstractmethod
    def _context_ids(self) -> list[int]:
        """The token ids of the context, in order."""

    @abstractmethod
    def _new_context(self) -> None:
        """An empty context."""

    @abstractmethod
    def _crop(self, length: int) -> None:
        """Cut the context back to its first `length` tokens."""

    @abstractmethod
    def _feed_steps(self, ids: list[int]) -> Steps:
        """Add `ids` to the context."""

    @abstractmethod
    def _generate_frame_steps(self, prev: State, sample: bool, action: str | None = None,
                              trail: tuple[tuple[State, str], ...] = ()) -> Steps:
        """The next frame after `<|frame_sep|>` (a Generated, or None when it could not be decoded); a
        frame returned is left in the context, after `<|frame_sep|>`."""

    def _context_len(self) -> int:
        return len(self._context_ids())

    def recover(self) -> None:
        """Put the session back on solid ground after an operation that stopped part way (an error in
        the model's pass, a time limit, a cancel): the context holds the program's header and the
        current state again, as at a rebase, and the next prediction starts there. The history and the
        current state are those of the last prediction that finished, so nothing a user saw is lost.
        It asks nothing of the model (it needs no lock), so a model that keeps failing cannot make it
        fail. (A state the trace format cannot write, which no prediction gives, leaves an empty
        context.)"""
        state = self._state
        if state is not None and self.planner is not None:
            try:
                next(self._rebase_steps(state, self.inverse))
            except StopIteration:
                return  # rebased: feeding tokens needs no answer from the model
            except Exception:  # noqa: BLE001, S110 - the empty context below says what is wrong
                pass
        self._new_context()

    # ---- operations ------------------------------------------------------------------------------
    def resume_steps(self, program: Program, history: list[State], inverse: bool) -> Steps:
        if not history:
            raise EngineError("resume needs at least the current state")
        state = history[-1]
        try:
            context_frame(state, inverse)
        except ValueError as exc:
            raise EngineError(f"the state cannot be written in the trace format: {exc}") from None
        facts = ProgramFacts.of(program, objects=self.format_version >= 3)
        self.program, self.facts = program, facts
        room = self.max_context - 2 * MAX_FRAME_TOKENS
        self.planner = HeaderPlanner(program, self.format_version, room, self.encode, self.line_costs(program))
        self._state = None
        yield from self._header_steps(state, inverse)
        self.history = list(history)
        self.trail = []
        self._state = state
        return state

    def predict_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Steps:
        current = self.state
        if current.exit is not None:
            if action.is_inverse and len(self.history) > 1:
                # Inverse contexts have no exit frame: go back to the last state seen before it.
                self.history.pop()
                self._state = self.history[-1]
                self.trail = []
                yield from self._rebase_steps(self._state, inverse=True)
            return self.state
        if action.kind == "continue" and breakpoints and not action.is_inverse:
            action = Action(kind="breakpoint", lines=tuple(sorted(breakpoints)))
        mark, after_action = yield from self._action_steps(current, action)
        new_state = None
        problem = ""
        for attempt in range(2):  # greedy, then one sampled retry
            generated = yield from self._generate_frame_steps(current, attempt > 0, action.kind, tuple(self.trail))
            parsed = self._parse(generated, current, action)
            if isinstance(parsed, State):
                new_state = parsed
                break
            problem = parsed
            self._crop(after_action)
        if new_state is None:
            self._crop(mark)  # as if the action had not been taken
            failed = current.model_copy(update={"error": f"prediction failed: {problem}{ORACLE_HINT}"})
            self._state = failed
            return failed
        self.history.append(new_state)
        self._record_step(current, action)
        self._state = new_state
        return new_state

    def replace_current_steps(self, state: State) -> Steps:
        yield from self._rebase_steps(state, self.inverse)
        self.history[-1] = state
        self.trail = []
        self._state = state
        return state

    def sample_steps(self, action: Action, k: int) -> Steps:
        """k predictions with sampling (inverse actions are the ones with several plausible answers).

        The current state does not move; the context is re-encoded first when the action's direction
        differs from the context's, as a step would. A sample that fails to parse comes back as the
        current state with `error` set."""
        current = self.state
        if current.exit is not None:
            raise EngineError("sampling needs a paused program, not the exit state")
        if action.kind == "breakpoint" and not action.lines:
            raise EngineError("a breakpoint action needs lines")
        mark, after_action = yield from self._action_steps(current, action)
        samples: list[State] = []
        for _ in range(k):
            generated = yield from self._generate_frame_steps(current, True, action.kind, tuple(self.trail))
            parsed = self._parse(generated, current, action)
            samples.append(parsed if isinstance(parsed, State)
                           else current.model_copy(update={"error": f"prediction failed: {parsed}"}))
            self._crop(after_action)
        self._crop(mark)
        return samples

    # ---- the context -------------------------------------------------------------------------------
    def _action_steps(self, current: State, action: Action) -> Steps:
        """The action's tokens added to the context (rebased first when the direction changes, the
        context would grow too long, or the program view no longer holds `current`); the context's
        length before and after them."""
        if (action.is_inverse != self.inverse or self._context_len() > self.max_context - 2 * MAX_FRAME_TOKENS
                or not self._view_holds(current)):
            yield from self._rebase_steps(current, action.is_inverse)
        mark = self._context_len()
        yield from self._feed_steps(self.encode(fmt.serialize_action(action)))
        return mark, self._context_len()

    @staticmethod
    def _parse(generated: Generated | None, current: State, action: Action) -> State | str:
        """The predicted state with its confidence, or what is wrong with the frame."""
        parsed = fmt.parse_frame(generated.text, current, action.is_inverse) if generated else None
        if isinstance(parsed, State) and generated is not None:
            return parsed.model_copy(update={"confidence": generated.confidence(parsed)})
        return str(parsed) if parsed is not None else "the frame did not end"

    def default_follow_steps(self) -> int:
        """DEFAULT_FOLLOW_STEPS where the header shows the whole program, VIEW_FOLLOW_STEPS where it shows
        a view of a longer one (engine/follow.py)."""
        return DEFAULT_FOLLOW_STEPS if self.view.lines is None else VIEW_FOLLOW_STEPS

    def _view_holds(self, state: State) -> bool:
        return self.planner is None or self.planner.holds(self.view, state)

    def _header_steps(self, state: State, inverse: bool) -> Steps:
        """A new context: the header with the program view chosen for `state` (model_backend.view),
        then `state` as the first frame."""
        assert self.planner is not None
        try:
            self.view, header = self.planner.plan(state)
        except HeaderTooLong as exc:
            raise EngineError(f"{exc}: debug it with the oracle engine (--engine oracle)") from None
        self._new_context()
        yield from self._feed_steps(header)
        self.header_len = len(header)
        self.inverse = inverse
        yield from self._feed_steps(self.encode(context_frame(state, inverse)))

    def _rebase_steps(self, state: State, inverse: bool) -> Steps:
        """Cut the context back to the program and start a new trajectory at `state` (with a new header
        when the program view no longer holds what `state` needs)."""
        if not self._view_holds(state):
            yield from self._header_steps(state, inverse)
            return
        self._crop(self.header_len)
        self.inverse = inverse
        yield from self._feed_steps(self.encode(context_frame(state, inverse)))

    def _decoder(self, prev: State, sample: bool, action: str | None,
                 trail: tuple[tuple[State, str], ...]) -> FrameDecoder:
        """The decoder of the next frame; a sample's generator depends on the context only, not on
        what else is in a batch."""
        assert self.facts is not None
        generator = None
        if sample:
            generator = request_generator([*self._context_ids(), self.vocabulary.special_ids[fmt.FRAME]],
                                          self.samples_drawn)
            self.samples_drawn += 1
        decoder = FrameDecoder(FrameConstraint(self.facts, prev, self.inverse, action, trail), self.vocabulary,
                               sample, generator, self.sample_temperature)
        decoder.record_branches = not sample and self.search_branches > 0
        return decoder

