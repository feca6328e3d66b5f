"""Real code from Python's own standard library: pure-Python functions of chosen modules, each copied
with the module-level definitions it needs into a standalone script and called with generated inputs.

The modules are read from the running interpreter's `Lib` folder (nothing is downloaded). A function is
taken where `real_code`'s rules take an `algorithms` function: its parameters can be typed from their
annotations or names, it stands alone (what it needs from its module is copied in; other standard
modules stay imports), and it uses no I/O, clock, randomness or threads. Its calls are its doctest
examples plus random inputs. The programs are real library code, with classes, helper functions,
module constants and the standard library's idioms, which generated programs lack.
"""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

from model_backend.data.real_code import _Resolver, module_programs
from model_backend.program import Program

# Pure-Python modules whose functions compute on strings, numbers and lists.
# (Modules on bytes, such as base64, are left out: the inputs generated from names are str.)
MODULES = (
    "bisect", "calendar", "colorsys", "difflib", "fnmatch", "fractions", "graphlib", "heapq", "html",
    "keyword", "ntpath", "posixpath", "shlex", "statistics", "string", "textwrap", "urllib.parse",
    "reprlib", "pprint", "email.utils", "json.encoder", "json.decoder", "ipaddress", "operator",
    "functools", "copy", "stringprep", "_strptime", "netrc", "mimetypes", "glob",
)
PER_MODULE = 12  # functions taken from one module at the most (operator alone has over a hundred)
# The second set (`more_stdlib_programs`): functions of the modules above past their first PER_MODULE,
# and those of more modules, none of which the first set takes.
MORE_MODULES = (
    "email._header_value_parser", "email.quoprimime", "token", "urllib.request", "pydoc", "enum",
    "tomllib._parser", "xml.dom.minidom", "imaplib", "smtplib", "unittest.util", "dis", "codeop", "locale",
)
MORE_PER_MODULE = 24
SKIP_NAMES = frozenset({"print", "input", "open", "eval", "exec", "compile"})  # builtins a taken function never names
PACKAGE = "stdlib"  # the resolver's name for the root folder: `stdlib.textwrap` is Lib/textwrap.py


def stdlib_dir() -> Path:
    """The running interpreter's standard library folder."""
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_programs(seed: int, n_random: int = 3, max_doctests: int = 3, max_lines: int = 120,
                    modules: tuple[str, ...] = MODULES, per_module: int = PER_MODULE, skip: int = 0) -> list[Program]:
    """Standalone scripts for the public functions of `modules` (`per_module` at the most, the first in
    the module's order after the first `skip`), each with its doctest calls (up to `max_doctests`) and
    `n_random` random inputs. Paths are `<stdlib:module.function>`."""
    resolver = _Resolver(stdlib_dir(), package=PACKAGE)
    rng = random.Random(f"stdlib:{seed}")
    out: list[Program] = []
    for module in modules:
        mod = resolver.module(f"{PACKAGE}.{module}")
        if mod is not None:
            out += module_programs(resolver, mod, f"stdlib:{module}", rng, n_random=n_random,
                                   max_doctests=max_doctests, max_lines=max_lines, sort_lists=module == "bisect",
                                   origin="stdlib", limit=per_module, skip=skip, skip_names=SKIP_NAMES)
    return out


def more_stdlib_programs(seed: int, n_random: int = 3) -> list[Program]:
    """The second set: the functions of MODULES that `stdlib_programs` passes over (past its first
    PER_MODULE of a module), then those of MORE_MODULES; MORE_PER_MODULE of a module at the most. No
    function is in both sets, so a model trained on the first meets new code in the second."""
    return (stdlib_programs(seed, n_random, skip=PER_MODULE, per_module=MORE_PER_MODULE)
            + stdlib_programs(seed, n_random, modules=MORE_MODULES, per_module=MORE_PER_MODULE))
