"""Helpers shared by the tests: the corpus of test programs, a DAP client, a pdb driver, a tiny model."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
