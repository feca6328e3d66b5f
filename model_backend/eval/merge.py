"""`ndb eval merge`: one CruxEval run's JSON from the `ndb eval cruxeval --json` files of its parts, and how
it compares with a recorded run.

The parts (chunks of problems run side by side, e.g. by scripts/gpu/cpu_evals.sh) merge into one file of
the same shape as a single run's, the problems in CruxEval's order when --data names the JSONL. With
--against, the problems passed in one run and not the other, and both pass counts over the problems both
runs have (with --ids FROM-TO, only problems FROM..TO, 1-based positions in --data).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def merge(parts: list[dict[str, Any]], order: list[str] | None) -> dict[str, Any]:
    """One run's JSON from its parts' (the options of the first part; seconds summed)."""
    results = {r["id"]: r for part in parts for r in part["results"]}
    ids = [i for i in order if i in results] if order else sorted(results)
    merged = {k: v for k, v in parts[0].items() if k not in ("results", "seconds")}
    merged.update(n=len(ids), passed=sum(bool(results[i]["pass"]) for i in ids),
                  timed_out=sum(p.get("timed_out", 0) for p in parts),
                  seconds=sum(float(p.get("seconds", 0)) for p in parts), results=[results[i] for i in ids])
    merged["pass_at_1"] = merged["passed"] / max(1, merged["n"])
    return merged


def compare(merged: dict[str, Any], recorded: dict[str, Any], order: list[str] | None,
            span: tuple[int, int] | None = None) -> str:
    """The problems of both runs (positions `span` of `order` only, when given): pass counts, gained, lost."""
    before = {r["id"]: bool(r["pass"]) for r in recorded["results"]}
    now = {r["id"]: bool(r["pass"]) for r in merged["results"]}
    common = [i for i in (order or sorted(now)) if i in now and i in before]
    if span is not None:
        wanted = set((order or [])[span[0] - 1:span[1]])
        common = [i for i in common if i in wanted]
    gained = [i for i in common if now[i] and not before[i]]
    lost = [i for i in common if before[i] and not now[i]]
    return (f"on {len(common)} problems in both: {sum(now[i] for i in common)} now, "
            f"{sum(before[i] for i in common)} recorded; gained {gained or 'none'}, lost {lost or 'none'}")


def _span(ids: str) -> tuple[int, int]:
    lo, sep, hi = ids.partition("-")
    if not (sep and lo.isdigit() and hi.isdigit() and 1 <= int(lo) <= int(hi)):
        raise ValueError(f"--ids {ids!r}: give FROM-TO, 1-based positions, FROM <= TO")
    return int(lo), int(hi)


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("results"), list) \
            or not all(isinstance(r, dict) and "id" in r and "pass" in r for r in data["results"]):
        raise ValueError(f"{path}: not the JSON of `ndb eval cruxeval --json` (results with id and pass)")
    return data


def register(eval_app: typer.Typer) -> None:
    @eval_app.command("merge")
    def merge_command(
        parts: Annotated[list[Path], typer.Argument(help="`ndb eval cruxeval --json` files of parts of one run.")],
        out: Annotated[Path, typer.Option("--out", help="Where to write the merged run's JSON.")],
        data: Annotated[Path | None, typer.Option("--data", help="The CruxEval JSONL, for the problems' order.")] = None,
        against: Annotated[Path | None, typer.Option("--against", help="A recorded run's JSON to compare with.")] = None,
        ids: Annotated[str | None, typer.Option("--ids", help="FROM-TO: compare only these positions of --data (1-based).")] = None,
    ) -> None:
        """Merge the JSON files of parts of one CruxEval run, and compare with a recorded run."""
        try:
            span = _span(ids) if ids else None
            order = [json.loads(line)["id"] for line in data.read_text(encoding="utf-8").splitlines() if line.strip()] \
                if data else None
            merged = merge([_read_json(p) for p in parts], order)
            recorded = _read_json(against) if against else None
        except (OSError, ValueError, KeyError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        merged["data"] = str(data) if data else merged.get("data")
        out.write_text(json.dumps(merged, indent=1))
        typer.echo(f"{out}: {merged['passed']}/{merged['n']} passed, {merged['timed_out']} over the time limit")
        if recorded is not None:
            typer.echo(compare(merged, recorded, order, span))
