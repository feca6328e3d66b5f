"""What a dataset covers: its programs by source and by construct (`ndb data coverage`).

Contract: `coverage(data_dir, split)` reads every record of the split's complete shards (nothing runs)
and counts, per program (records share a `program_id`), where it comes from (`source_kind`) and which
of `constructs.CONSTRUCTS` its source uses, found from the header's code as `constructs.constructs`
finds them in the realistic benchmark. A header whose code does not parse (a program view that leaves
lines out can cut a block) counts under `unparsed`. The report says which constructs no program uses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from model_backend import trace_format as fmt
from model_backend.constructs import CONSTRUCTS, constructs
from model_backend.data.build import iter_records, record_text


@dataclass
class Coverage:
    split: str
    programs: int = 0
    trajectories: int = 0
    chars: int = 0
    unparsed: int = 0
    sources: Counter[str] = field(default_factory=Counter)  # programs by source_kind
    constructs: Counter[str] = field(default_factory=Counter)  # programs using each construct

    @property
    def missing(self) -> list[str]:
        return [c for c in CONSTRUCTS if not self.constructs[c]]

    def lines(self) -> list[str]:
        out = [f"{self.split}: {self.programs} programs, {self.trajectories} trajectories, {self.chars:,} chars; "
               f"sources: " + ", ".join(f"{k} {v}" for k, v in self.sources.most_common())]
        out += [f"  {name:28} {self.constructs[name]:6} programs" for name in CONSTRUCTS]
        if self.unparsed:
            out.append(f"  (headers that do not parse: {self.unparsed})")
        out.append(f"  constructs no program uses: {', '.join(self.missing) or 'none'}")
        return out


def coverage(data_dir: str | Path, split: str = "train") -> Coverage:
    """Count the split's programs by source and construct (see the module docstring)."""
    report = Coverage(split)
    seen: set[str] = set()
    for record in iter_records(data_dir, split):
        report.trajectories += 1
        text = record_text(record)
        report.chars += len(text)
        pid = record["program_id"]
        if pid in seen:
            continue
        seen.add(pid)
        report.programs += 1
        report.sources[record.get("source_kind", "other")] += 1
        parsed = fmt.parse(text)
        try:
            if isinstance(parsed, fmt.FormatError):
                raise SyntaxError(parsed.message)
            found = constructs(parsed.code)
        except SyntaxError:
            report.unparsed += 1
            continue
        report.constructs.update(found)
    return report
