"""The errors an engine raises for a request it cannot serve."""

from __future__ import annotations


class EngineError(RuntimeError):
    """A request the engine cannot serve (not started, program failed to load, worker gone, ...)."""


class Cancelled(EngineError):
    """A long operation stopped because its caller asked it to (e.g. the user cancelled an inference)."""
