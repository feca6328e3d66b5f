"""CruxEval pass@1 through the debugger (evaluation only: never train or tune on these problems).

Output prediction: start at the call of `f(<input>)` and reach its return state by
  --via steps        repeated step_into until f returns,
  --via step_return  one step_return,
  --via breakpoint   one breakpoint on f's return lines, then step_over onto the return event
                     (more than one when the return statement spans several lines);
a model engine takes step_return and breakpoint as single steps within its budget, as in a debugging
session (engine/follow.py); `follow_steps=0` measures the model's one jump instead.
the predicted return value (its repr) passes when `assert <output> == <prediction>` holds, executed
after the code in the sandbox (a prediction that calls f fails).
Input prediction: start at f's return state holding the known output and infer the arguments
(engine/infer.py): the greedy inverse jump (inv_step_call) and `samples` sampled ones propose argument
lists, the first `checks` are run forward to f's return, up to `edits` edits of the closest ones follow
while none is confirmed (`width` runs side by side), and the first whose predicted return is the output
is the answer (else the greedy one); `samples=0, checks=0` measures the model's one inverse jump.
It passes when `assert <output> == f(<args>)`. The program the model sees has the entry expression
`f(...)`: the real arguments are the answer.
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from model_backend import safe_ast
from model_backend.engine import Engine, EngineError, create_engine, infer
from model_backend.program import Program
from model_backend.sampler import hidden_entry
from model_backend.sandbox import Limits, run_check
from model_backend.state import Action

CHECK_LIMITS = Limits(wall_time=5.0, cpu_time=5)
MAX_STEPS = 2000  # step_into actions for --via steps
MAX_OVER = 20  # step_over actions from the breakpoint to the return event
PROBLEM_SECONDS = 120.0  # default time limit per problem: one problem must not hold the whole run


class ProblemTimeout(Exception):
    """A problem used up its time limit before the engine reached f's return."""


def load_problems(path: str, limit: int | None = None) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        problems = [json.loads(line) for line in fh if line.strip()]
    return problems[:limit] if limit else problems


def return_lines(code: str) -> list[int]:
    """Lines of the `return` statements of the top-level `f` (not of functions nested in it)."""
    return infer.return_lines(code, "f")


def _calls_f(prediction: str) -> bool:
    try:
        tree = safe_ast.parse(prediction, mode="eval")
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "f" for n in ast.walk(tree))


def predict_output(engine: Engine, problem: dict[str, str], via: str, deadline: float | None = None) -> str | None:
    """f's predicted return value, or None; ProblemTimeout once time.monotonic() passes `deadline`
    (checked between steps: one step is never cut)."""
    program = Program(source=problem["code"], path="<cruxeval>", entry=f"f({problem['input']})")
    state = engine.start(program)
    if via == "step_return":
        state = engine.step(Action(kind="step_return"))
    elif via == "breakpoint":
        state = engine.step(Action(kind="breakpoint", lines=tuple(return_lines(problem["code"]))))
        for _ in range(MAX_OVER):  # a return statement may span several lines
            if state.event != "line" or state.depth != 0 or state.error:
                break
            state = engine.step(Action(kind="step_over"))
    else:  # steps
        for _ in range(MAX_STEPS):
            if state.exit is not None or state.error or (state.event == "return" and state.depth == 0):
                break
            if deadline is not None and time.monotonic() > deadline:
                raise ProblemTimeout(f"no return within the time limit (at line {state.line}, depth {state.depth})")
            state = engine.step(Action(kind="step_into"))
    if state.event == "return" and state.depth == 0 and not state.error:
        return state.value
    return None


HIDDEN_ENTRY = hidden_entry("f(<input>)")  # the call as the model sees it in the input task: `f(...)`


def predict_input(engine: Engine, problem: dict[str, str], samples: int = infer.DEFAULT_SAMPLES,
                  checks: int = infer.DEFAULT_CHECKS, edits: int = infer.DEFAULT_EDITS,
                  width: int = infer.DEFAULT_WIDTH, deadline: float | None = None,
                  walks: int = infer.DEFAULT_WALKS,
                  proposer: Engine | None = None) -> tuple[str | None, infer.Inference | None]:
    """The predicted arguments, and how they were inferred (None for the oracle). With `proposer`, its
    model proposes and `engine`'s checks (new sessions of it).

    The model must not see the input: every program it reads carries `f(...)` or a proposal, never
    `f(<input>)` (an entry expression with the real arguments would let it copy them). The oracle runs
    the program, so it needs the real call; it checks the harness, not a prediction."""
    if engine.name == "oracle":
        program = Program(source=problem["code"], path="<cruxeval>", entry=f"f({problem['input']})")
        engine.start(program, at="exit", known_exit=infer.known_return(program, "f", problem["output"]))
        state = engine.step(Action(kind="inv_step_call"))
        if state.event != "call" or state.error or state.function != "f":
            return None, None
        return infer.call_arguments(state.locals, infer.signature(problem["code"], "f")), None
    factory = infer.new_sessions(engine) if proposer is not None else None
    inference = infer.infer_arguments(proposer or engine, problem["code"], "f", problem["output"], samples, checks,
                                      edits, width, engine_factory=factory, deadline=deadline, walks=walks)
    return inference.arguments, inference


def score(problem: dict[str, str], task: str, prediction: str | None) -> bool:
    if prediction is None:
        return False
    if task == "output":
        if _calls_f(prediction):
            return False
        check = f"{problem['code']}\nassert {problem['output']} == {prediction}\n"
    else:
        check = f"{problem['code']}\nassert {problem['output']} == f({prediction})\n"
    return run_check(check, CHECK_LIMITS).exit == "normal"


def evaluate(
    data: str, task: str = "output", via: str = "step_return", engine_name: str = "neural",
    model: str | None = None, limit: int | None = None, progress: bool = True, search_branches: int | None = None,
    problem_seconds: float | None = PROBLEM_SECONDS, follow_steps: int | None = None,
    samples: int = infer.DEFAULT_SAMPLES, checks: int = infer.DEFAULT_CHECKS, edits: int = infer.DEFAULT_EDITS,
    width: int = infer.DEFAULT_WIDTH, walks: int = infer.DEFAULT_WALKS, proposer_model: str | None = None,
) -> dict[str, Any]:
    """pass@1 over the problems; a problem over `problem_seconds` (None: no limit) fails with its error noted.
    `proposer_model` (input task, neural engine): another checkpoint proposes the arguments."""
    if task not in ("output", "input") or via not in ("steps", "step_return", "breakpoint"):
        raise ValueError("task is output|input and via is steps|step_return|breakpoint")
    if proposer_model is not None and (task != "input" or engine_name != "neural"):
        raise ValueError("a proposer model is for the input task on the neural engine")
    problems = load_problems(data, limit)
    engine = create_engine(engine_name, model=model)
    from model_backend.engine.neural import NeuralEngine, proposer_engine  # torch: only when evaluating

    proposer = proposer_engine(engine, proposer_model) if task == "input" else None
    if search_branches is not None and hasattr(engine, "search_branches"):
        engine.search_branches = search_branches
    if follow_steps is not None:
        engine.follow(follow_steps)
    results, passed, timed_out, started = [], 0, 0, time.perf_counter()
    for problem in tqdm(problems, desc=f"cruxeval {task}", disable=not progress):
        began = time.monotonic()
        deadline = began + problem_seconds if problem_seconds is not None else None
        inference = None
        try:
            if task == "output":
                prediction = predict_output(engine, problem, via, deadline)
            else:
                prediction, inference = predict_input(engine, problem, samples, checks, edits, width, deadline,
                                                      walks, proposer)
            error = None
        except EngineError as exc:
            prediction, error = None, str(exc)
        except ProblemTimeout as exc:
            prediction, error = None, f"ProblemTimeout: {exc}"
            timed_out += 1
        ok = score(problem, task, prediction)
        passed += ok
        result: dict[str, Any] = {"id": problem["id"], "prediction": prediction, "pass": ok, "error": error,
                                  "seconds": round(time.monotonic() - began, 2)}
        if inference is not None:
            result.update(confirmed=inference.confirmed,
                          proposals=[p.model_dump(exclude_defaults=True) for p in inference.proposals])
        results.append(result)
    engine.close()
    if proposer is not None:
        proposer.close()
    return {
        "data": str(Path(data)), "task": task, "via": via if task == "output" else "infer" if samples or checks else "inv_step_call",
        "engine": engine_name, "model": model,
        **({"proposer": proposer.m.path if isinstance(proposer, NeuralEngine) else "model"} if task == "input" else {}),
        "search_branches": getattr(engine, "search_branches", None),
        "follow_steps": getattr(engine, "follow_steps", None),
        **({"samples": samples, "checks": checks, "edits": edits, "width": width, "walks": walks}
           if task == "input" else {}),
        "problem_seconds": problem_seconds, "timed_out": timed_out,
        "n": len(problems), "passed": passed,
        "pass_at_1": passed / max(1, len(problems)), "seconds": time.perf_counter() - started, "results": results,
    }
