"""Real code from permissively licensed PyPI packages: pure-Python functions of chosen modules, each copied
with the module-level definitions it needs into a standalone script and called with generated inputs.

The packages are project dependencies (pinned in pyproject.toml) and are read from their installed files;
nothing is downloaded and nothing of them is imported into a traced program: what a function needs from its
package (other modules' helpers included) is copied in, as `real_code` does for `algorithms`. A function is
taken where `real_code`'s rules take one: its parameters can be typed from their annotations or names, it
stands alone in `max_lines` lines, it is no generator, and it uses no I/O, clock, randomness or threads.
Its calls are its doctest examples plus random inputs.

- boltons (BSD-3-Clause): string, iteration, math, formatting, URL, statistics and list helpers, written
  in the idioms of library code (keyword defaults, module constants, regular expressions, small classes).
- inflection (MIT): word inflections (camelize, underscore, pluralize, ordinal...), rules in module tables.
- toolz (BSD-3-Clause): functional helpers on sequences and functions (groupby, partition, frequencies,
  compose...), with keyword defaults and sentinels.
- more-itertools (MIT): the itertools recipes and more; most are generators, which are left out, so the
  functions taken are those that return a value.

A second set (`more_pypi_programs`, MORE_PACKAGES) takes the functions of these modules past their first
PER_MODULE, and those of more packages, none of which the first set takes:

- sympy (BSD-3-Clause): number theory (factoring, residues, digits, Egyptian fractions), iterables
  (partitions, permutations, runs), polynomial helpers over lists.
- mpmath (BSD-3-Clause): the integer and binary floating-point kernels (`libmp`) on tuples of ints.
- Jinja2 (BSD-3-Clause): template filters and helpers on strings and lists.
- markdown-it-py (MIT) and mdurl (MIT): Markdown's string helpers, URL encoding, decoding and parsing.
- idna (BSD-3-Clause): internationalized domain names, code-point ranges.
- Pygments (BSD-2-Clause) and pyparsing (MIT): string and token helpers.
- packaging (Apache-2.0 or BSD-2-Clause): name canonicalization, version parsing.
- rich (MIT): ratio splitting and markup escaping.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

from model_backend.data.real_code import _package_dir, _Resolver, module_programs
from model_backend.program import Program

# package -> its modules to read ("" is the package's own __init__.py)
PACKAGES: dict[str, tuple[str, ...]] = {
    "boltons": ("strutils", "iterutils", "mathutils", "formatutils", "urlutils", "statsutils", "listutils",
                "setutils", "dictutils", "tableutils", "timeutils", "typeutils"),
    "inflection": ("",),
    "toolz": ("itertoolz", "functoolz"),
    "more_itertools": ("more", "recipes"),
}
PER_MODULE = 16  # functions taken from one module at the most
MORE_PACKAGES: dict[str, tuple[str, ...]] = {
    "sympy": ("utilities.iterables", "utilities.misc", "ntheory.factor_", "ntheory.generate", "ntheory.modular",
              "ntheory.residue_ntheory", "ntheory.digits", "ntheory.egyptian_fraction", "ntheory.partitions_",
              "ntheory.multinomial", "ntheory.bbp_pi", "polys.galoistools", "printing.conventions"),
    "mpmath": ("libmp.libintmath", "libmp.libmpf", "libmp.gammazeta", "identification"),
    "jinja2": ("utils", "filters", "lexer"),
    "markdown_it": ("common.utils", "common.normalize_url"),
    "mdurl": ("_decode", "_encode"),
    "idna": ("core", "intranges"),
    "pygments": ("util", "token"),
    "pyparsing": ("util", "helpers"),
    "packaging": ("utils", "version"),
    "rich": ("_ratio", "markup"),
}
MORE_PER_MODULE = 24
SKIP_NAMES = frozenset({"print", "input", "open", "eval", "exec", "compile", "time", "sleep", "random"})


def package_root(name: str) -> Path:
    """The installed package's folder (FileNotFoundError when it is not installed)."""
    root = _package_dir(name)
    if root is None:
        raise FileNotFoundError(f"the {name} package is not installed (pip install -e . installs it)")
    return root


def pypi_programs(seed: int, n_random: int = 3, max_doctests: int = 3, max_lines: int = 120,
                  packages: dict[str, tuple[str, ...]] | None = None, per_module: int = PER_MODULE,
                  skip: int = 0) -> list[Program]:
    """Standalone scripts for the public functions of `packages`' modules (`per_module` at the most, the
    first in the module's order after the first `skip`), each with its doctest calls (up to
    `max_doctests`) and `n_random` random inputs. Paths are `<pypi:package.module.function>`; the origin
    is "pypi"."""
    out: list[Program] = []
    for package, modules in (PACKAGES if packages is None else packages).items():
        resolver = _Resolver(package_root(package), package=package)
        rng = random.Random(f"pypi:{package}:{seed}")
        for module in modules:
            dotted = f"{package}.{module}" if module else package
            mod = resolver.module(dotted)
            if mod is not None:
                out += module_programs(resolver, mod, f"pypi:{dotted}", rng, n_random=n_random,
                                       max_doctests=max_doctests, max_lines=max_lines, sort_lists=False,
                                       origin="pypi", limit=per_module, skip=skip, skip_names=SKIP_NAMES)
    return out


def more_pypi_programs(seed: int, n_random: int = 3) -> list[Program]:
    """The second set: the functions of PACKAGES that `pypi_programs` passes over (past its first
    PER_MODULE of a module), then those of MORE_PACKAGES; MORE_PER_MODULE of a module at the most. No
    function is in both sets. A script that still imports a module outside the standard library (sympy's
    functions import parts of sympy inside their bodies) is left out: the model would see calls into code
    the program does not show."""
    programs = (pypi_programs(seed, n_random, skip=PER_MODULE, per_module=MORE_PER_MODULE)
                + pypi_programs(seed, n_random, packages=MORE_PACKAGES, per_module=MORE_PER_MODULE))
    return [p for p in programs if imported_modules(p.source) <= sys.stdlib_module_names]


def imported_modules(source: str) -> set[str]:
    """The top-level names of the modules that `source` imports anywhere (relative imports not counted)."""
    tree = ast.parse(source)
    names = {alias.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names}
    return names | {n.module.split(".")[0] for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
