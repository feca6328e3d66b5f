"""Sandbox start-up overhead per run, before and after a change, measured alternately in one process so
that both see the same load: `python scripts/bench_sandbox_startup.py --before REV [--runs N]`.

REV's model_backend/sandbox.py and tracer.py are extracted into a temporary directory and imported from
there; the working tree's are the "after". Each run traces `x = 1` (three events): what it costs is the
start-up of the child (bwrap and its namespaces, Python, the tracer) and the read of its events."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model_backend import sandbox as after  # noqa: E402
from model_backend.program import Program  # noqa: E402


def load_before(rev: str, where: Path) -> Any:
    for name in ("sandbox.py", "tracer.py"):
        text = subprocess.run(["git", "show", f"{rev}:model_backend/{name}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        (where / name).write_text(text)
    spec = importlib.util.spec_from_file_location("sandbox_before", where / "sandbox.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["sandbox_before"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="git revision of the sandbox before")
    parser.add_argument("--runs", type=int, default=30)
    ns = parser.parse_args()
    program = Program(source="x = 1\n", path="/bench/trivial.py")
    with tempfile.TemporaryDirectory() as tmp:
        before = load_before(ns.before, Path(tmp))
        after.isolation()  # the one-time probe is not a run's cost
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(ns.runs):
            for label, module in (("before", before), ("after", after)):
                started = time.perf_counter()
                result = module.run_trace(program)
                times[label].append((time.perf_counter() - started) * 1000)
                assert result.exit == "normal", result.exit_reason
    report = {label: {"median_ms": round(statistics.median(ts), 1),
                      "p90_ms": round(sorted(ts)[int(0.9 * (len(ts) - 1))], 1)} for label, ts in times.items()}
    report["overhead_ms_median"] = round(report["after"]["median_ms"] - report["before"]["median_ms"], 1)
    report["runs"] = ns.runs
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
