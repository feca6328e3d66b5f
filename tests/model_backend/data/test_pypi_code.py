"""pypi_code: functions of PyPI packages copied into standalone scripts with generated calls."""

from __future__ import annotations

import ast
import sys

from model_backend.data.programs import all_programs, origin_of
from model_backend.data.pypi_code import (
    MORE_PACKAGES,
    PACKAGES,
    imported_modules,
    more_pypi_programs,
    pypi_programs,
)
from model_backend.program import Program
from model_backend.sandbox import run_trace


def test_each_program_stands_alone_and_calls_its_function() -> None:
    programs = pypi_programs(0)
    assert {p.path.split(".")[0] for p in programs} == {f"<pypi:{package}" for package in PACKAGES}
    for p in programs:
        tree = ast.parse(p.source)
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        function = p.path.removesuffix(">").rsplit(".", 1)[1]
        assert function in defined
        assert p.entry is not None and p.entry.startswith(f"{function}(")
        assert origin_of(p) == "pypi"
        # nothing of the package is imported: what the function needs is copied in
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not imported & set(PACKAGES), p.path


def test_a_function_from_a_package_init_runs_in_the_sandbox() -> None:
    camelize = next(p for p in pypi_programs(0, packages={"inflection": ("",)}) if p.path == "<pypi:inflection.camelize>")
    result = run_trace(Program(source=camelize.source, entry="camelize('device_type')"))
    assert result.exit == "normal", result.exit_reason
    returns = [e for e in result.events if e.event == "return" and e.function == "camelize"]
    assert returns and returns[-1].value == "'DeviceType'"


def test_the_same_seed_gives_the_same_programs_and_a_module_is_capped() -> None:
    first = pypi_programs(3, packages={"boltons": ("strutils",)}, per_module=4)
    again = pypi_programs(3, packages={"boltons": ("strutils",)}, per_module=4)
    assert [(p.path, p.entry) for p in first] == [(p.path, p.entry) for p in again]
    assert len({p.path for p in first}) == 4


def test_all_programs_adds_them_only_when_asked() -> None:
    without = all_programs(seed=0, n_generated=0, humaneval=False, algorithms=False)
    with_pypi = all_programs(seed=0, n_generated=0, humaneval=False, algorithms=False, pypi=True)
    assert not any(origin_of(p) == "pypi" for p in without)
    assert sum(origin_of(p) == "pypi" for p in with_pypi) > 100


def test_the_second_set_is_new_code_that_imports_only_the_standard_library() -> None:
    first = {p.path for p in pypi_programs(0)}
    second = more_pypi_programs(0)
    assert len({p.path for p in second}) > 80 and not first & {p.path for p in second}
    packages = {p.path.removeprefix("<pypi:").split(".")[0] for p in second}
    assert packages - set(PACKAGES) <= set(MORE_PACKAGES) and len(packages - set(PACKAGES)) >= 6
    for p in second:
        assert imported_modules(p.source) <= set(sys.stdlib_module_names), p.path


def test_imported_modules_counts_imports_anywhere_but_not_relative_ones() -> None:
    source = "import os.path\nfrom . import x\ndef f():\n    from sympy.core import S\n    import re, json\n"
    assert imported_modules(source) == {"os", "sympy", "re", "json"}
