"""The code action's work: argument lists that make a function return a value (nothing runs).

`infer_inputs` asks model_backend.engine.infer (the model proposes arguments backwards, and confirms
each by its own forward run to the return), as mcp_server.queries.infer_inputs does, and answers the
`ndb.inferInputs` command with up to k confirmed argument lists and the other checked ones.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from model_backend import safe_ast
from model_backend.engine.base import Engine, EngineError
from model_backend.engine.infer import check, infer_arguments, new_sessions
from model_backend.program import ProgramError, return_lines

DEFAULT_K = 3
DEFAULT_SECONDS = 60.0


@dataclass(frozen=True)
class InferenceSettings:
    samples: int = 8
    checks: int = 8
    edits: int = 24
    seconds: float = DEFAULT_SECONDS


def infer_inputs(engine_factory: Callable[[], Engine], source: str, function: str, returned: str, k: int,
                 settings: InferenceSettings, cancel: threading.Event | None = None) -> dict[str, object]:
    """{"function", "returned", "confirmed": [argument text...] (at most k), "checked": [{"arguments",
    "predicted"}...]}; EngineError for a value that is not a literal or a function without a return."""
    from model_backend.engine.neural import proposer_engine

    try:
        return_lines(source, function)
        safe_ast.literal_eval(returned)
    except ProgramError as exc:
        raise EngineError(str(exc)) from None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise EngineError(f"the return value must be a Python literal: {returned!r}") from None
    deadline = time.monotonic() + settings.seconds
    engine = engine_factory()
    factory = engine_factory if engine.name == "worker" else new_sessions(engine)
    proposer = proposer_engine(engine) if engine.name == "neural" else None
    try:
        result = infer_arguments(proposer or engine, source, function, returned, samples=settings.samples,
                                 checks=settings.checks, edits=settings.edits, engine_factory=factory,
                                 deadline=deadline, cancel=cancel)
        confirmed = [p for p in result.proposals if p.confirmed]
        unchecked = [p for p in result.proposals if p.predicted_return is None and p.problem is None]
        if len(confirmed) < k and unchecked and time.monotonic() < deadline:
            check(factory, source, function, returned, unchecked, deadline)
    finally:
        engine.close()
        if proposer is not None:
            proposer.close()
    confirmed = [p for p in result.proposals if p.confirmed][:k]
    others = [p for p in result.proposals if not p.confirmed and (p.predicted_return or p.problem)]
    return {"function": function, "returned": returned,
            "confirmed": [p.arguments for p in confirmed],
            "checked": [{"arguments": p.arguments, "predicted": p.predicted_return or p.problem} for p in others[:8]]}


def summary(result: dict[str, object]) -> str:
    confirmed = result["confirmed"]
    assert isinstance(confirmed, list)
    name = result["function"]
    if not confirmed:
        return f"No argument list of {name} confirmed to return {result['returned']} (the model's own runs; nothing ran)."
    calls = "; ".join(f"{name}({args})" for args in confirmed)
    return f"{len(confirmed)} confirmed to return {result['returned']} (the model's own runs; nothing ran): {calls}"
