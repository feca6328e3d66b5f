"""The CruxEval harness, checked on the oracle engine (which must score 100% on output prediction)."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_backend.eval.cruxeval import evaluate, load_problems, return_lines, score
from tests.support import REPO

DEV = REPO.parent / "shared" / "data" / "cruxeval_dev.jsonl"
needs_dev = pytest.mark.skipif(not DEV.exists(), reason=f"{DEV} not found (shared/ beside the checkout)")


@needs_dev
@pytest.mark.parametrize("via", ["steps", "step_return", "breakpoint"])
def test_oracle_output_prediction_is_perfect(via: str) -> None:
    result = evaluate(str(DEV), task="output", via=via, engine_name="oracle", limit=12, progress=False)
    failed = [r for r in result["results"] if not r["pass"]]
    assert result["n"] == 12 and not failed


@needs_dev
def test_oracle_input_prediction_is_perfect() -> None:
    result = evaluate(str(DEV), task="input", engine_name="oracle", limit=12, progress=False)
    assert result["passed"] == 12


def test_scoring_rejects_wrong_and_cheating_predictions() -> None:
    problem = {"code": "def f(x):\n    return x * 2", "input": "3", "output": "6", "id": "t"}
    assert score(problem, "output", "6")
    assert not score(problem, "output", "7")
    assert not score(problem, "output", "f(3)")  # an output prediction may not call f
    assert not score(problem, "output", None)
    assert score(problem, "input", "3")
    assert not score(problem, "input", "4")
    assert not score(problem, "input", "__import__('os').fork()")  # runs in the sandbox, fails


def test_return_lines_ignore_nested_functions() -> None:
    code = "def f(x):\n    def g(y):\n        return y\n    if x:\n        return g(x)\n    return 0\n"
    assert return_lines(code) == [5, 6]


@needs_dev
def test_problems_load() -> None:
    problems = load_problems(str(DEV), limit=3)
    assert len(problems) == 3 and {"code", "input", "output", "id"} <= problems[0].keys()


def test_the_model_never_sees_the_input_it_must_predict(untrained_checkpoint: Path) -> None:
    """Input prediction: the program header the neural engine encodes holds `f(...)`, not the arguments
    (an earlier harness passed `f(<input>)`, and a trained model copied it)."""
    from model_backend import trace_format as fmt
    from model_backend.engine.neural import LoadedModel, NeuralEngine
    from model_backend.eval.cruxeval import HIDDEN_ENTRY, predict_input

    engine = NeuralEngine(LoadedModel.load(untrained_checkpoint))
    problem = {"code": "def f(text, n):\n    return text[:n]", "input": "'secret-word', 6", "output": "'secret'", "id": "t"}
    prediction, inference = predict_input(engine, problem, samples=1, checks=1, edits=2)
    assert engine.program is not None and engine.program.entry == HIDDEN_ENTRY
    assert inference is not None and prediction == inference.arguments  # the checks ran on sessions of their own
    context = engine.m.tokenizer.decode(engine.context_ids)
    assert "secret-word" not in context and fmt.serialize_header(engine.program) in context


def test_a_problem_over_its_time_limit_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    import json

    problems = [{"id": f"t{k}", "code": "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s",
                 "input": str(k), "output": str(sum(range(k)))} for k in (3, 4)]
    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in problems))
    over = evaluate(str(data), task="output", via="steps", engine_name="oracle", progress=False, problem_seconds=1e-6)
    assert over["n"] == 2 and over["passed"] == 0 and over["timed_out"] == 2
    assert all(r["error"].startswith("ProblemTimeout") for r in over["results"])
    within = evaluate(str(data), task="output", via="steps", engine_name="oracle", progress=False)
    assert within["passed"] == 2 and within["timed_out"] == 0
