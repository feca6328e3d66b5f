"""Module-mode variants of entry-mode corpus programs, for the debugpy parity test (debugpy has no `entry`).

A variant is the corpus program of tests/programs with its `# entry: CALL` header line replaced by a note,
and `result = CALL` / `print(result)` appended after two blank lines: every other line, and so every line
number and the `# breakpoints:` header, stays as it is. The variants are written at load time into a
folder of the temporary directory (debugpy and the adapter launch a file); tests/parity_programs holds
only the programs written for parity.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from tests.support import TESTS

PROGRAMS_DIR = TESTS / "programs"
PARITY_DIR = TESTS / "parity_programs"
VARIANTS_DIR = Path(tempfile.gettempdir()) / f"ndb-module-mode-{os.getuid()}"

# The entry-mode corpus programs that the parity test runs in module mode.
VARIANT_NAMES = (
    "binary_search", "class_property", "class_static_classmethod", "closures", "early_return",
    "exc_in_comprehension", "exc_recursion_unwind", "exc_reraise_finally", "exc_same_function",
    "exc_try_except_else", "exc_try_finally", "hanoi", "list_dict_methods", "listcomp_call",
    "loop_else_break_continue", "matrix_nested_loops", "mutual_recursion", "nested_calls", "nested_functions",
    "recursion_factorial", "recursion_fib", "varargs_kwargs", "while_loop",
)


def module_mode(source: str, name: str) -> str:
    """The module-mode variant of an entry-mode program's source (ValueError without an `# entry:` line)."""
    first, _, rest = source.partition("\n")
    match = re.fullmatch(r"# entry: (.+)", first)
    if match is None:
        raise ValueError(f"{name}: the first line is not an `# entry:` header")
    entry = match.group(1).strip()
    note = f"# module-mode variant of tests/programs/{name}.py; its entry is called at module level (last lines)"
    return f"{note}\n{rest.rstrip()}\n\n\nresult = {entry}\nprint(result)\n"


def write_variants(names: tuple[str, ...] = VARIANT_NAMES, out: Path = VARIANTS_DIR) -> list[Path]:
    """Write the variants of `names` into `out` (atomically: concurrent runs write the same text)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        text = module_mode((PROGRAMS_DIR / f"{name}.py").read_text(encoding="utf-8"), name)
        path = out / f"{name}.py"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            fd, tmp = tempfile.mkstemp(dir=out, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        paths.append(path)
    return paths
