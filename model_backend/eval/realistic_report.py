"""The figures, the printed table and the plots of `ndb eval realistic` (model_backend/eval/realistic.py)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from model_backend.engine.follow import DEFAULT_FOLLOW_STEPS, VIEW_FOLLOW_STEPS
from model_backend.state import ActionKind

# The forward actions a rollout draws from (realistic.ACTION_WEIGHTS), each counted apart
ACTIONS: tuple[ActionKind, ...] = ("step_into", "step_over", "step_return", "breakpoint", "continue")
TIME_LIMIT = "time limit"  # the failure of an action paused at the program's time limit (PROGRAM_SECONDS)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def summarize(programs: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures over all programs' detail."""
    per_action: dict[str, dict[str, int]] = {kind: {"exact": 0, "total": 0, "failed": 0} for kind in ACTIONS}
    per_construct: dict[str, dict[str, int]] = {}
    horizons: list[int] = []
    timed_out = 0
    ms: list[float] = []
    starts = [0, 0]
    returns = [0, 0]
    for detail in programs:
        if detail["status"] != "ok":
            continue
        timed_out += detail["return"]["got"] == f"failed: {TIME_LIMIT}"
        for rollout in detail["rollouts"]:
            timed_out += rollout.get("stopped") == TIME_LIMIT or any(s.get("failed") == TIME_LIMIT for s in rollout["stops"])
            horizons.append(rollout["trust_horizon"])
            starts[0] += rollout["start_exact"]
            starts[1] += 1
            for stop in rollout["stops"]:
                row = per_action[stop["action"].split(":")[0]]
                row["total"] += 1
                row["exact"] += stop["exact"]
                row["failed"] += "failed" in stop
                ms.append(stop["ms"])
                for construct in detail.get("constructs") or ():
                    cell = per_construct.setdefault(construct, {"exact": 0, "total": 0, "programs": 0})
                    cell["exact"] += stop["exact"]
                    cell["total"] += 1
        returns[0] += detail["return"]["exact"]
        returns[1] += 1
        for construct in detail.get("constructs") or ():
            per_construct.setdefault(construct, {"exact": 0, "total": 0, "programs": 0})["programs"] += 1
    exact = sum(row["exact"] for row in per_action.values())
    total = sum(row["total"] for row in per_action.values())
    status = [d["status"] for d in programs]
    return {
        "per_action": {k: {**row, "rate": row["exact"] / row["total"] if row["total"] else None}
                       for k, row in per_action.items()},
        "all": {"exact": exact, "total": total, "failed": sum(r["failed"] for r in per_action.values()),
                "rate": exact / total if total else None},
        "per_construct": {k: {**cell, "rate": cell["exact"] / cell["total"] if cell["total"] else None}
                          for k, cell in sorted(per_construct.items())},
        "start": {"exact": starts[0], "total": starts[1]},
        "trust_horizon": {"mean": statistics.fmean(horizons) if horizons else None,
                          "median": statistics.median(horizons) if horizons else None, "values": horizons},
        "return_value": {"exact": returns[0], "total": returns[1], "rate": returns[0] / returns[1] if returns[1] else None},
        "programs": len(programs), "scored": status.count("ok"), "refused": status.count("refused"),
        "broken": status.count("broken"), "crashed": status.count("crashed"), "timed_out": timed_out,
        "ms_per_action": {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "n": len(ms)},
    }


def _rate(exact: int, total: int) -> str:
    return f"{exact:4d}/{total:<4d} {100 * exact / total:5.1f}%" if total else f"{exact:4d}/{total:<4d}    - "


def _budget(follow_steps: int | None) -> str:
    """The budget a run set, or what the engine's default is (engine/follow.py)."""
    if follow_steps is not None:
        return str(follow_steps)
    return f"the engine's ({DEFAULT_FOLLOW_STEPS} for a program shown whole, {VIEW_FOLLOW_STEPS} for one shown as a view)"


def format_table(result: dict[str, Any]) -> str:
    lines = [f"engine {result['engine']}, model {result['model']}, split {result['split']}, seed {result['seed']}, "
             f"{result['rollouts']} rollout(s) of up to {result['actions']} actions, {result['programs']} programs, "
             f"follow steps {_budget(result.get('follow_steps'))}, {result['seconds']:.0f}s",
             f"{'action':14s} {'exact/total':>16s} {'failed':>7s}"]
    for kind, row in result["per_action"].items():
        lines.append(f"{kind:14s} {_rate(row['exact'], row['total'])} {row['failed']:7d}")
    every = result["all"]
    lines.append(f"{'all':14s} {_rate(every['exact'], every['total'])} {every['failed']:7d}")
    horizon = result["trust_horizon"]
    if horizon["mean"] is not None:
        lines.append(f"trust horizon: mean {horizon['mean']:.2f}, median {horizon['median']:g} exact stops before the "
                     f"first miss ({len(horizon['values'])} rollouts)")
    ret, start = result["return_value"], result["start"]
    lines.append(f"return value from the entry: {_rate(ret['exact'], ret['total']).strip()} exact")
    lines.append(f"first state: {_rate(start['exact'], start['total']).strip()} exact")
    lines.append(f"programs: {result['scored']} scored, {result['refused']} refused, {result['broken']} broken "
                 f"(the oracle cannot run them), {result['crashed']} crashed")
    for detail in result["detail"]:
        if detail["status"] != "ok":
            lines.append(f"  {detail['status']}: {detail['name']}: {detail['error']}")
    constructs = result.get("per_construct") or {}
    if constructs:
        lines.append("exact stops in programs that use a construct (programs):")
        for name, cell in constructs.items():
            lines.append(f"  {name:26s} {_rate(cell['exact'], cell['total'])} ({cell['programs']})")
    if result.get("timed_out"):
        lines.append(f"{result['timed_out']} rollouts or return checks stopped at the {result['program_seconds']:g}s limit "
                     "per program (the action under way counted as failed)")
    ms = result["ms_per_action"]
    lines.append(f"ms per action: p50 {ms['p50']:.1f}, p99 {ms['p99']:.1f} ({ms['n']} actions)")
    return "\n".join(lines)


def plot(result: dict[str, Any], out_dir: str | Path) -> list[str]:
    """exact_per_action.png (exact rate per action) and trust_horizon.png (its histogram over rollouts)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = f"{result['engine']} on realistic/{result['split']}"
    kinds = list(result["per_action"])
    rates = [100 * (result["per_action"][k]["rate"] or 0.0) for k in kinds]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(kinds, rates, color="#4477aa")
    for x, kind in enumerate(kinds):
        row = result["per_action"][kind]
        ax.annotate(f"{row['exact']}/{row['total']}", (x, rates[x]), ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("exact stops (%)")
    ax.set_title(f"Exact stops per action: {title}")
    fig.tight_layout()
    paths = [out / "exact_per_action.png"]
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)
    values = result["trust_horizon"]["values"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    top = max(values, default=0)
    ax.hist(values, bins=range(top + 2), color="#aa7744", align="left", rwidth=0.8)
    ax.set_xlabel("exact stops before the first miss")
    ax.set_ylabel("rollouts")
    ax.set_title(f"Trust horizon: {title}")
    fig.tight_layout()
    paths.append(out / "trust_horizon.png")
    fig.savefig(paths[1], dpi=100)
    plt.close(fig)
    return [str(p) for p in paths]
