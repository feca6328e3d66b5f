"""Drop the model families a wheel of transformers carries but we never load.

    python scripts/gpu/slim_wheel.py WHEEL FAMILY...

Rewrites WHEEL in place, keeping `transformers/models/FAMILY/` for each FAMILY named (and every file
directly under `transformers/models/`). The auto classes find a family by name when it is asked for, so
the others are never imported by a Llama checkpoint; `encoder_decoder` must stay, the auto tokenizer
imports it. pip does not check RECORD's hashes, so the wheel installs as it is.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path


def slim(wheel: Path, keep: set[str]) -> tuple[int, int]:
    """Rewrite `wheel` without the other families; return (files kept, files dropped)."""
    out = wheel.with_suffix(".slim")
    kept = dropped = 0
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for item in src.infolist():
            parts = item.filename.split("/")
            if parts[:2] == ["transformers", "models"] and len(parts) > 3 and parts[2] not in keep:
                dropped += 1
                continue
            dst.writestr(item, src.read(item))
            kept += 1
    out.replace(wheel)
    return kept, dropped


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kept, dropped = slim(Path(sys.argv[1]), set(sys.argv[2:]))
    print(f"{sys.argv[1]}: {kept} files kept, {dropped} dropped")
