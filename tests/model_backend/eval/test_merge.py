"""`ndb eval merge`: parts of one CruxEval run merged in the problems' order, compared with a recorded run."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dap_server.cli import app

runner = CliRunner()


def _run(path: Path, passes: dict[str, bool], seconds: float, timed_out: int = 0) -> Path:
    results = [{"id": i, "pass": p, "predicted": "x"} for i, p in passes.items()]
    path.write_text(json.dumps({"task": "output", "model": "m", "n": len(results), "passed": sum(passes.values()),
                                "timed_out": timed_out, "seconds": seconds, "results": results}))
    return path


def test_parts_merge_in_the_data_order_and_compare_with_a_recorded_run(tmp_path: Path) -> None:
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps({"id": f"sample_{k}", "code": "", "input": "", "output": ""}) + "\n"
                            for k in range(4)))
    a = _run(tmp_path / "a.json", {"sample_2": True, "sample_0": False}, 10.0, timed_out=1)
    b = _run(tmp_path / "b.json", {"sample_3": True, "sample_1": True}, 5.5)
    recorded = _run(tmp_path / "recorded.json", {f"sample_{k}": k in (0, 1) for k in range(4)}, 1.0)
    out = tmp_path / "merged.json"
    result = runner.invoke(app, ["eval", "merge", str(a), str(b), "--out", str(out), "--data", str(data),
                                 "--against", str(recorded)])
    assert result.exit_code == 0, result.output
    merged = json.loads(out.read_text())
    assert [r["id"] for r in merged["results"]] == ["sample_0", "sample_1", "sample_2", "sample_3"]
    assert (merged["n"], merged["passed"], merged["timed_out"], merged["seconds"]) == (4, 3, 1, 15.5)
    assert merged["pass_at_1"] == 0.75 and merged["task"] == "output" and merged["data"] == str(data)
    assert f"{out}: 3/4 passed, 1 over the time limit" in result.output
    assert "on 4 problems in both: 3 now, 2 recorded; gained ['sample_2', 'sample_3'], lost ['sample_0']" \
        in result.output
    only = runner.invoke(app, ["eval", "merge", str(a), str(b), "--out", str(out), "--data", str(data),
                               "--against", str(recorded), "--ids", "1-2"])
    assert "on 2 problems in both: 1 now, 2 recorded; gained none, lost ['sample_0']" in only.output


def test_bad_input_is_one_line_and_status_2(tmp_path: Path) -> None:
    good = _run(tmp_path / "good.json", {"sample_0": True}, 1.0)
    not_a_run = tmp_path / "other.json"
    not_a_run.write_text(json.dumps({"results": [{"no": "id"}]}))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    out = str(tmp_path / "out.json")
    for args in ([str(tmp_path / "missing.json")], [str(not_a_run)], [str(broken)], [str(good), "--ids", "3-1"],
                 [str(good), "--against", str(broken)], [str(good), "--data", str(broken)]):
        result = runner.invoke(app, ["eval", "merge", *args, "--out", out])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("ndb: error:") and result.output.count("\n") == 1, result.output
