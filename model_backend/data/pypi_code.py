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
"""

from __future__ import annotations

import random
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
SKIP_NAMES = frozenset({"print", "input", "open", "eval", "exec", "compile", "time", "sleep", "random"})


def package_root(name: str) -> Path:
    """The installed package's folder (FileNotFoundError when it is not installed)."""
    root = _package_dir(name)
    if root is None:
        raise FileNotFoundError(f"the {name} package is not installed (pip install -e . installs it)")
    return root


def pypi_programs(seed: int, n_random: int = 3, max_doctests: int = 3, max_lines: int = 120,
                  packages: dict[str, tuple[str, ...]] | None = None, per_module: int = PER_MODULE) -> list[Program]:
    """Standalone scripts for the public functions of `packages`' modules (`per_module` at the most, the
    first in the module's order), each with its doctest calls (up to `max_doctests`) and `n_random` random
    inputs. Paths are `<pypi:package.module.function>`; the origin is "pypi"."""
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
                                       origin="pypi", limit=per_module, skip_names=SKIP_NAMES)
    return out
