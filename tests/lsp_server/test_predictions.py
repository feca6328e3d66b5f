"""lsp_server/predictions.py: when predictions are queued (the shipped model, in process)."""

from __future__ import annotations

import time

from lsp_server.predictions import Predictor
from model_backend.engine.neural import create_neural_engine

SOURCE = "def double(x):\n    return x * 2\n# ndb: double(4)\n"


def test_an_opened_document_is_predicted_at_once_and_an_edit_after_the_debounce() -> None:
    predictor = Predictor(create_neural_engine, lambda uri: None, max_steps=4, debounce=30.0)
    try:
        predictor.schedule("file:///opened.py", "d1", SOURCE, ["double(4)"], "/opened.py", debounce=False)
        assert predictor.get("d1", "double(4)") is not None  # queued without waiting
        predictor.schedule("file:///edited.py", "d2", SOURCE, ["double(4)"], "/edited.py")
        time.sleep(0.5)
        assert predictor.get("d2", "double(4)") is None  # waits for the debounce
        predictor.schedule("file:///edited.py", "d3", SOURCE + "\n", ["double(4)"], "/edited.py", debounce=False)
        assert predictor.get("d3", "double(4)") is not None  # a later schedule without debounce replaces the timer
        time.sleep(0.2)
        assert predictor.get("d2", "double(4)") is None
    finally:
        predictor.close()
