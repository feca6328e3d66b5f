"""Merge `ndb eval cruxeval --json` files of parts of one run, and compare with a recorded run.

    python scripts/merge_cruxeval.py --out merged.json PART.json... [--against RECORDED.json] [--ids FROM-TO]

The parts (chunks of problems run side by side, e.g. by scripts/gpu/cpu_evals.sh) are merged into one file
of the same shape as a single run's, the problems in CruxEval's order when --data names the JSONL. With
--against, prints the problems passed in one run and not the other, and both pass counts over the problems
both runs have (optionally only problems FROM..TO, 1-based positions in --data).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def merge(parts: list[dict], order: list[str] | None) -> dict:
    """One run's JSON from its parts' (the options of the first part; seconds summed)."""
    results = {r["id"]: r for part in parts for r in part["results"]}
    ids = [i for i in order if i in results] if order else sorted(results)
    merged = {k: v for k, v in parts[0].items() if k not in ("results", "seconds")}
    merged.update(n=len(ids), passed=sum(results[i]["pass"] for i in ids),
                  timed_out=sum(p.get("timed_out", 0) for p in parts),
                  seconds=sum(float(p["seconds"]) for p in parts), results=[results[i] for i in ids])
    merged["pass_at_1"] = merged["passed"] / max(1, merged["n"])
    return merged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default="", help="the CruxEval JSONL, for the problems' order")
    ap.add_argument("--against", default="", help="a recorded run's JSON to compare with")
    ap.add_argument("--ids", default="", help="FROM-TO: compare only these positions of --data (1-based)")
    args = ap.parse_args()
    order = [json.loads(line)["id"] for line in Path(args.data).read_text().splitlines()] if args.data else None
    merged = merge([json.loads(Path(p).read_text()) for p in args.parts], order)
    merged["data"] = args.data or merged.get("data")
    Path(args.out).write_text(json.dumps(merged, indent=1))
    print(f"{args.out}: {merged['passed']}/{merged['n']} passed, {merged['timed_out']} over the time limit")
    if not args.against:
        return
    recorded = {r["id"]: r["pass"] for r in json.loads(Path(args.against).read_text())["results"]}
    now = {r["id"]: r["pass"] for r in merged["results"]}
    common = [i for i in (order or sorted(now)) if i in now and i in recorded]
    if args.ids:
        lo, hi = (int(x) for x in args.ids.split("-"))
        wanted = set((order or [])[lo - 1:hi])
        common = [i for i in common if i in wanted]
    gained = [i for i in common if now[i] and not recorded[i]]
    lost = [i for i in common if recorded[i] and not now[i]]
    print(f"on {len(common)} problems in both: {sum(now[i] for i in common)} now, "
          f"{sum(recorded[i] for i in common)} recorded; gained {gained or 'none'}, lost {lost or 'none'}")


if __name__ == "__main__":
    main()
