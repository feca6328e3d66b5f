"""stdlib_code: standard-library functions copied into standalone scripts with generated calls."""

from __future__ import annotations

import ast

from model_backend.data.programs import all_programs, origin_of
from model_backend.data.stdlib_code import MORE_MODULES, more_stdlib_programs, stdlib_programs


def test_each_program_stands_alone_and_calls_its_function() -> None:
    programs = stdlib_programs(0, modules=("textwrap", "colorsys", "bisect"))
    assert {p.path.split(".")[0] for p in programs} == {"<stdlib:textwrap", "<stdlib:colorsys", "<stdlib:bisect"}
    for p in programs:
        tree = ast.parse(p.source)
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        function = p.path.removesuffix(">").rsplit(".", 1)[1]
        assert function in defined
        assert p.entry is not None and p.entry.startswith(f"{function}(")
        assert origin_of(p) == "stdlib"


def test_a_function_brings_the_module_constants_it_uses() -> None:
    dedent = [p for p in stdlib_programs(0, modules=("textwrap",)) if p.path == "<stdlib:textwrap.dedent>"]
    assert dedent, "textwrap.dedent(text) has a typed parameter and stands alone"
    assert "_whitespace_only_re = re.compile(" in dedent[0].source
    assert "import re" in dedent[0].source  # other standard modules stay imports
    # wrap(text, width=70, **kwargs) takes keyword arguments whose types cannot be told: left out
    assert not any(p.path == "<stdlib:textwrap.wrap>" for p in stdlib_programs(0, modules=("textwrap",)))


def test_the_same_seed_gives_the_same_programs_and_a_module_is_capped() -> None:
    first = stdlib_programs(3, modules=("operator",), per_module=5)
    assert [(p.path, p.entry) for p in first] == [(p.path, p.entry) for p in stdlib_programs(3, modules=("operator",), per_module=5)]
    assert len({p.path for p in first}) == 5


def test_all_programs_adds_them_only_when_asked() -> None:
    without = all_programs(seed=0, n_generated=0, humaneval=False, algorithms=False)
    with_lib = all_programs(seed=0, n_generated=0, humaneval=False, algorithms=False, stdlib=True)
    assert not any(origin_of(p) == "stdlib" for p in without)
    assert sum(origin_of(p) == "stdlib" for p in with_lib) > 100


def test_skip_gives_what_the_limit_leaves() -> None:
    first = stdlib_programs(3, modules=("operator",), per_module=5)
    rest = stdlib_programs(3, modules=("operator",), per_module=5, skip=5)
    both = stdlib_programs(3, modules=("operator",), per_module=10)
    paths = [p.path for p in both]
    assert list(dict.fromkeys(p.path for p in first + rest)) == list(dict.fromkeys(paths))
    assert not {p.path for p in first} & {p.path for p in rest}


def test_the_second_set_takes_no_function_of_the_first() -> None:
    first = {p.path for p in stdlib_programs(0)}
    second = more_stdlib_programs(0)
    assert len({p.path for p in second}) > 50 and not first & {p.path for p in second}
    assert {p.path.split(".")[0].removeprefix("<stdlib:") for p in second} & {m.split(".")[0] for m in MORE_MODULES}
    assert all(origin_of(p) == "stdlib" for p in second)
