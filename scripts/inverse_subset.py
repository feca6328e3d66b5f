"""Copy a built dataset keeping only the inverse trajectories of its held-out split, so that
`ndb eval next-state` measures inverse steps alone (forward ones cost two thirds of the time and no
inverse rule touches them).

    python scripts/inverse_subset.py data_out/s99b data_out/s99b_inv
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

from model_backend.data.build import ShardInfo


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    kept = 0
    for shard in sorted(target.glob("heldout-*.jsonl")):
        lines = [line for line in shard.read_text(encoding="utf-8").splitlines(keepends=True)
                 if line.strip() and json.loads(line)["inverse"]]
        kept += len(lines)
        data = "".join(lines).encode()
        shard.write_bytes(data)
        stats_path = shard.with_suffix(".stats.json")
        info = ShardInfo.model_validate_json(stats_path.read_text(encoding="utf-8"))
        info.bytes, info.sha256 = len(data), hashlib.sha256(data).hexdigest()  # what marks a shard complete
        stats_path.write_text(info.model_dump_json(indent=2) + "\n", encoding="utf-8")
    print(f"{target}: {kept} inverse held-out trajectories")


if __name__ == "__main__":
    main()
