"""Variants of corpus programs, for the debugpy parity test: written at load time into a folder of the
temporary directory (debugpy and the adapter launch a file), so that a program exists once, in
tests/programs; tests/parity_programs holds only the programs written for parity.

A module-mode variant (debugpy has no `entry`) is an entry-mode corpus program with its `# entry: CALL`
header line replaced by a note, and `result = CALL` / `print(result)` appended after two blank lines:
every other line, and so every line number and the `# breakpoints:` header, stays as it is.

A script variant is a module-mode corpus program run with breakpoints and a script of its own: its
`# breakpoints:` header line replaced by a parity note and the `# breakpoints:` and `# script:` headers
the parity test reads, every other line two lines down.
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


# name -> (the module-mode corpus program, what its script shows, its breakpoints, its script); the
# breakpoints are lines of the variant (the corpus program's line + 2).
SCRIPT_VARIANTS: dict[str, tuple[str, str, str, str]] = {
    "generator_exhausted": (
        "generator_for", "`next` over the end of a generator that runs out normally, with no exception",
        "7", "continue continue next next next"),
}


def module_mode(source: str, name: str) -> str:
    """The module-mode variant of an entry-mode program's source (ValueError without an `# entry:` line)."""
    first, _, rest = source.partition("\n")
    match = re.fullmatch(r"# entry: (.+)", first)
    if match is None:
        raise ValueError(f"{name}: the first line is not an `# entry:` header")
    entry = match.group(1).strip()
    note = f"# module-mode variant of tests/programs/{name}.py; its entry is called at module level (last lines)"
    return f"{note}\n{rest.rstrip()}\n\n\nresult = {entry}\nprint(result)\n"


def script_variant(source: str, name: str, purpose: str, breakpoints: str, script: str) -> str:
    """The script variant of a module-mode program's source (ValueError unless its first line is its
    `# breakpoints:` header)."""
    first, _, rest = source.partition("\n")
    if not first.startswith("# breakpoints:"):
        raise ValueError(f"{name}: the first line is not a `# breakpoints:` header")
    note = f"# parity program: {purpose} (tests/programs/{name}.py with a script of its own)"
    return f"{note}\n# breakpoints: {breakpoints}\n# script: {script}\n{rest}"


def _write(out: Path, name: str, text: str) -> Path:
    """`out/NAME.py` holding `text` (written atomically: concurrent runs write the same text)."""
    path = out / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        fd, tmp = tempfile.mkstemp(dir=out, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    return path


def write_variants(names: tuple[str, ...] = VARIANT_NAMES, out: Path = VARIANTS_DIR) -> list[Path]:
    """Write the module-mode variants of `names` into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    return [_write(out, name, module_mode((PROGRAMS_DIR / f"{name}.py").read_text(encoding="utf-8"), name))
            for name in names]


def write_script_variants(out: Path = VARIANTS_DIR) -> list[Path]:
    """Write the script variants of SCRIPT_VARIANTS into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (program, purpose, breakpoints, script) in SCRIPT_VARIANTS.items():
        source = (PROGRAMS_DIR / f"{program}.py").read_text(encoding="utf-8")
        paths.append(_write(out, name, script_variant(source, program, purpose, breakpoints, script)))
    return paths
