"""Engines: what the debug adapter and the terminal debugger drive. See base.Engine."""

from __future__ import annotations

from model_backend.engine.base import Engine, EngineError, StartAt

ENGINE_NAMES = ("oracle", "neural")


def create_engine(name: str, model: str | None = None) -> Engine:
    """The engine a launch configuration names, in this process. Raises EngineError for an unknown or
    unusable one. (A neural engine served by `ndb worker` is model_backend.worker.client.WorkerEngine:
    the worker depends on the engines, never the reverse.)"""
    if name == "oracle":
        from model_backend.engine.oracle import OracleEngine

        return OracleEngine()
    if name == "neural":
        try:
            from model_backend.engine.neural import create_neural_engine
        except ImportError as exc:
            raise EngineError(f"the neural engine is not available: {exc}") from None
        return create_neural_engine(model=model)
    raise EngineError(f"unknown engine {name!r} (choose one of: {', '.join(ENGINE_NAMES)})")


__all__ = ["ENGINE_NAMES", "Engine", "EngineError", "StartAt", "create_engine"]
