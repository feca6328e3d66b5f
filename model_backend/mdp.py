"""The debugger as a Markov decision process over one recorded trace.

Nodes are the trace's events in execution order, plus two kinds of synthetic node:
- `inv_line_call`: the inverse tree's duplicate of a line whose statement made calls. It sits right
  after the last event of those calls, so stepping backwards first meets the line "with its calls
  done", can enter them (`inv_step_into`) or skip them (`inv_step_over`);
- `exit`: the end of the program, carrying the exit code.

Forward actions reproduce pdb's stopping rules exactly, by simulating bdb's dispatch logic on the
recorded events (stopframe / returnframe / stoplineno, generator special cases, frames that bdb
leaves untraced). Inverse actions walk the node list backwards. The rules, with the pdb behaviour
they copy, are written down in docs/mdp.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from model_backend.state import Action, State, TraceEvent, TraceResult

NodeKind = Literal["event", "inv_line_call", "exit"]
_NO_FRAME = -100  # bdb's stopframe when it is a frame that is not the program's own code


@dataclass(frozen=True)
class Node:
    kind: NodeKind
    index: int  # the event shown (for inv_line_call: the line that made the calls)
    after: int  # the last event executed when paused here (for inv_line_call: the calls' last event)
    depth: int


@dataclass
class BdbState:
    """What pdb's tracing remembers between stops.

    `untraced`: frames whose call bdb declined to trace (dispatch_call returned None), so their
    events never reach it. `traced`: frames that have had a trace function; CPython keeps a frame's
    f_trace when a later call event (a generator's resumption) returns None, so their events keep
    coming. After a jump, every frame seen so far counts as traced, as if pdb had stepped there.
    """

    untraced: set[int] = field(default_factory=set)
    traced: set[int] = field(default_factory=set)

    def reset(self, seen_frames: set[int]) -> None:
        self.untraced.clear()
        self.traced = set(seen_frames)


class TraceMDP:
    def __init__(self, result: TraceResult) -> None:
        self.result = result
        self.events = result.events
        self.is_generator = {e.frame_id: e.is_generator for e in self.events}
        self.nodes = self._build_nodes()
        self.node_of_event = {n.index: p for p, n in enumerate(self.nodes) if n.kind == "event"}

    # ---- structure ---------------------------------------------------------------------------
    def _build_nodes(self) -> list[Node]:
        events = self.events
        nodes: list[Node] = []
        last_at_depth: dict[int, int] = {}
        for i, ev in enumerate(events):
            nodes.append(Node("event", i, i, ev.depth))
            last_at_depth[ev.depth] = i
            nxt = events[i + 1] if i + 1 < len(events) else None
            # The end of a block of calls made by a line of the frame that continues at nxt.
            if nxt is not None and ev.depth > nxt.depth and nxt.depth in last_at_depth:
                owner = events[last_at_depth[nxt.depth]]
                if owner.frame_id == nxt.frame_id and owner.event in ("line", "exception"):
                    nodes.append(Node("inv_line_call", owner.index, i, owner.depth))
        nodes.append(Node("exit", -1, len(events) - 1, 0))
        return nodes

    @property
    def exit_position(self) -> int:
        return len(self.nodes) - 1

    def start_position(self, at: Literal["entry", "exit"] = "entry") -> int:
        if not self.events:
            return self.exit_position
        return 0 if at == "entry" else self.node_of_event[len(self.events) - 1]

    def state(self, position: int, stdout: str = "") -> State:
        node = self.nodes[position]
        if node.kind == "exit":
            return State.exit_state(self.result.exit, self.result.exit_reason, stdout)
        ev = self.events[node.index]
        if node.kind == "inv_line_call":
            return State.from_event(ev, stdout=stdout, event="inv_line_call")
        return State.from_event(ev, stdout=stdout)

    def children_count(self) -> int:
        return len(self.nodes)

    # ---- transitions ---------------------------------------------------------------------------
    def step(
        self, position: int, action: Action, breakpoints: frozenset[int] = frozenset(), bdb: BdbState | None = None
    ) -> tuple[int, str]:
        """Apply `action` at node `position`; return the new position and the stdout written meanwhile."""
        bdb = bdb if bdb is not None else BdbState()
        if action.is_inverse:
            target = self._inverse(position, action)
            after = self.nodes[target].after
            bdb.reset({e.frame_id for e in self.events[: after + 1]})  # as if pdb had just stopped there
            return target, ""
        if self.nodes[position].kind == "exit":
            return position, ""
        if action.kind == "breakpoint":
            mode, breaks = "continue", frozenset(action.lines) | breakpoints
        else:
            mode = {"step_into": "step", "step_over": "next", "step_return": "return", "continue": "continue"}[
                action.kind
            ]
            breaks = breakpoints
        stop = self._bdb_next_stop(position, mode, breaks, bdb)
        node = self.nodes[position]
        end = stop if stop is not None else len(self.events) - 1
        stdout = "".join(e.stdout for e in self.events[node.after + 1 : end + 1])
        if stop is None:
            return self.exit_position, stdout + self.result.stdout_tail
        return self.node_of_event[stop], stdout

    def _bdb_next_stop(self, position: int, mode: str, breaks: frozenset[int], bdb: BdbState) -> int | None:
        """The index of the next event at which pdb stops after command `mode`, or None at the end.

        Mirrors bdb.Bdb (CPython 3.11): set_step / set_next / set_return / set_continue, then
        dispatch_call / dispatch_line / dispatch_return / dispatch_exception for each later event.
        """
        node = self.nodes[position]
        cur = self.events[node.index]
        frame = cur.frame_id
        if mode == "step":
            stopframe, returnframe, stoplineno = None, None, 0
        elif mode == "next":
            stopframe, returnframe, stoplineno = frame, None, 0
        elif mode == "return":
            if cur.is_generator:
                stopframe, returnframe, stoplineno = frame, None, -1
            else:
                stopframe = cur.parent_id if cur.parent_id >= 0 else _NO_FRAME
                returnframe, stoplineno = frame, 0
        else:  # continue
            if not breaks:
                return None  # pdb removes its trace function and runs to the end
            stopframe, returnframe, stoplineno = _NO_FRAME, None, -1
        if node.kind == "event" and cur.event == "return":
            if mode == "step" and cur.parent_id >= 0:
                bdb.untraced.discard(cur.parent_id)  # bdb.set_step re-traces the caller (bpo-13183)
                bdb.traced.add(cur.parent_id)
            if stopframe == frame and stoplineno != -1:
                stopframe, returnframe, stoplineno = None, None, 0  # dispatch_return after user_return

        def stop_here(fid: int) -> bool:
            if fid == stopframe:
                return stoplineno != -1
            return stopframe is None

        for j in range(node.after + 1, len(self.events)):
            ev = self.events[j]
            fid = ev.frame_id
            if ev.event == "call":
                if not (stop_here(fid) or breaks):
                    # dispatch_call returns None: no local tracing, unless the frame kept its f_trace
                    if fid not in bdb.traced:
                        bdb.untraced.add(fid)
                    continue
                bdb.untraced.discard(fid)
                bdb.traced.add(fid)
                if stopframe is not None and ev.is_generator:
                    continue  # "Ignore call events in generator except when stepping"
                if stop_here(fid):
                    return j
                continue
            if fid in bdb.untraced:
                continue
            if ev.event == "line":
                if stop_here(fid) or ev.line in breaks:
                    return j
            elif ev.event == "return":
                if stop_here(fid) or fid == returnframe:
                    if stopframe is not None and ev.is_generator:
                        continue  # "Ignore return events in generator except when stepping"
                    return j
            elif ev.event == "exception":
                internal_stop = (ev.value or "").startswith("StopIteration")
                if stop_here(fid):
                    if not ev.internal:
                        return j
                elif (
                    stopframe is not None
                    and stopframe != _NO_FRAME
                    and fid != stopframe
                    and self.is_generator.get(stopframe, False)
                    and (internal_stop or (ev.value or "").startswith("GeneratorExit"))
                ):
                    return j
        return None

    def _inverse(self, position: int, action: Action) -> int:
        if position == 0:
            return 0  # the start of the recorded execution: nothing before it
        node = self.nodes[position]
        if action.kind == "inv_step_into":
            return position - 1
        if action.kind == "inv_step_over":
            for q in range(position - 1, -1, -1):
                if self.nodes[q].depth <= node.depth:
                    return q
            return 0
        # inv_step_call: the call event of the current frame (its arguments); from a call event, the
        # caller's call event.
        if node.kind == "exit":
            node = self.nodes[position - 1]
        ev = self.events[node.index]
        target_frame = ev.frame_id
        search_from = node.index
        if ev.event == "call" and node.kind == "event":
            target_frame, search_from = ev.parent_id, ev.index - 1
            if target_frame < 0:
                return position if node.index == 0 else 0
        for j in range(search_from, -1, -1):
            cand = self.events[j]
            if cand.frame_id == target_frame and cand.event == "call":
                return self.node_of_event[j]
            if cand.frame_id == target_frame and j == 0:
                return 0  # a module frame has no call event: its first state stands for it
        return 0


def replay_forward(result: TraceResult) -> list[TraceEvent]:
    """The events visited by repeating step_into from the start: the whole trace except the internal
    StopIteration events that pdb's step passes over (a property test)."""
    mdp = TraceMDP(result)
    position, visited, bdb = mdp.start_position(), [], BdbState()
    while mdp.nodes[position].kind != "exit":
        visited.append(mdp.events[mdp.nodes[position].index])
        position, _ = mdp.step(position, Action(kind="step_into"), bdb=bdb)
    return visited
