"""Programs to trace for training data: generated functions and scripts, real code, decontamination.

See `programs.py` for the combined API (`all_programs`, `keep_runnable`, `normalize_code`,
`load_cruxeval_fingerprints`), `funcgen.py` for the generator and `real_code.py` for HumanEval and the
`algorithms` package.
"""

from model_backend.data.funcgen import GenProgram, generate_functions, generate_scripts
from model_backend.data.programs import (
    Verdict,
    all_programs,
    check_runnable,
    decontaminate,
    fingerprints,
    keep_runnable,
    load_cruxeval_fingerprints,
    normalize_code,
)
from model_backend.data.real_code import algorithms_programs, humaneval_programs

__all__ = [
    "GenProgram",
    "Verdict",
    "algorithms_programs",
    "all_programs",
    "check_runnable",
    "decontaminate",
    "fingerprints",
    "generate_functions",
    "generate_scripts",
    "humaneval_programs",
    "keep_runnable",
    "load_cruxeval_fingerprints",
    "normalize_code",
]
