"""`ndb bench large-values` (model_backend/bench.py), run as a user runs it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from dap_server.cli import app

pytestmark = pytest.mark.timeout(600)
runner = CliRunner()


def test_large_values_traces_the_program_with_and_without_attributes() -> None:
    result = runner.invoke(app, ["bench", "large-values", "--runs", "1"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [row["record_attributes"] for row in rows] == [False, True]
    for row in rows:
        assert row["runs"] == 1 and row["median_s"] > 0 and row["events"] > 100
        # Unloaded, the 2,017 events end normally; a loaded machine hits the sandbox's wall-clock limit.
        assert row["events"] == 2017 if row["exit_reason"] is None else "wall-clock" in row["exit_reason"]

