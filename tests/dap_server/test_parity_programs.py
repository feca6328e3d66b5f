"""The debugpy parity test's variants (tests/support/module_mode.py): a module-mode variant keeps its corpus
program's lines, and so its line numbers and breakpoints, and calls its entry at module level; a script
variant keeps its program's lines two lines down, under its own breakpoints and script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.module_mode import (
    PROGRAMS_DIR,
    SCRIPT_VARIANTS,
    VARIANT_NAMES,
    module_mode,
    script_variant,
    write_script_variants,
    write_variants,
)


def test_a_variant_keeps_every_line_but_the_entry_header(tmp_path: Path) -> None:
    paths = write_variants(out=tmp_path)
    assert [p.stem for p in paths] == list(VARIANT_NAMES)
    for path in paths:
        source = (PROGRAMS_DIR / path.name).read_text().rstrip().splitlines()
        variant = path.read_text().splitlines()
        entry = source[0].removeprefix("# entry: ").strip()
        assert variant[1:len(source)] == source[1:]
        assert variant[len(source):] == ["", "", f"result = {entry}", "print(result)"]


def test_a_variant_prints_what_its_entry_returns(tmp_path: Path) -> None:
    (path,) = write_variants(("recursion_factorial",), out=tmp_path)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, check=True)
    entry = (PROGRAMS_DIR / "recursion_factorial.py").read_text().splitlines()[0].removeprefix("# entry: ")
    namespace: dict[str, object] = {}
    exec(compile((PROGRAMS_DIR / "recursion_factorial.py").read_text(), "recursion_factorial", "exec"), namespace)
    assert run.stdout == f"{eval(entry, namespace)}\n"


def test_a_program_without_an_entry_header_has_no_variant() -> None:
    with pytest.raises(ValueError, match="entry"):
        module_mode("x = 1\n", "plain")


def test_a_script_variant_keeps_its_programs_lines_under_its_own_headers(tmp_path: Path) -> None:
    paths = write_script_variants(out=tmp_path)
    assert [p.stem for p in paths] == list(SCRIPT_VARIANTS)
    for path in paths:
        program, _, breakpoints, script = SCRIPT_VARIANTS[path.stem]
        source = (PROGRAMS_DIR / f"{program}.py").read_text().splitlines()
        variant = path.read_text().splitlines()
        assert variant[1:3] == [f"# breakpoints: {breakpoints}", f"# script: {script}"]
        assert variant[3:] == source[1:]
        assert all(variant[int(line) - 1].strip() for line in breakpoints.split(","))  # on lines of code


def test_a_program_without_a_breakpoints_header_has_no_script_variant() -> None:
    with pytest.raises(ValueError, match="breakpoints"):
        script_variant("# entry: f()\nx = 1\n", "plain", "a purpose", "2", "next")
