"""What the editor shows, built from the cached predictions (lsprotocol types; no model call here).

- `code_lenses`: above each function with an example call, "predicted: f(...) returns X · p 0.97"
  (or "raises E"; "predicting f(...)…" while the model works). The lens's command,
  `neuralDebug.debugCall`, is the extension's: it starts a Neural Debug session at that call.
- `inlay_hints`: at the end of each line the predicted run went through, what the line binds
  (`total = 2 | 6 | 12  ×3`: the values of its successive runs, and how many runs), the arguments on
  the `def` line, the return value or exception on the line that ends the call.
- `hover`: a name on a line: its predicted values there, run by run (before → after when the line
  binds it).
- `code_actions`: "Infer inputs for a return value…" in any top-level function; its command,
  `neuralDebug.inferInputs`, is the extension's (it asks for the value, then calls `ndb.inferInputs`).
"""

from __future__ import annotations

import re

from lsprotocol import types

from lsp_server.examples import Function
from lsp_server.predictions import Prediction

DEBUG_COMMAND = "neuralDebug.debugCall"
INFER_COMMAND = "neuralDebug.inferInputs"
INFER_TITLE = "Infer inputs for a return value…"
MAX_VALUE_CHARS = 40
MAX_RUNS_SHOWN = 4
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lens_title(function: Function, prediction: Prediction | None, engine_error: str | None) -> str:
    call = cut(function.call or "", 60)
    if prediction is None or prediction.status in ("pending", "cancelled"):
        return f"{engine_error}" if engine_error else f"predicting {call}…"
    if prediction.status == "failed" and prediction.error:
        return f"no prediction of {call}: {cut(prediction.error, 100)}"
    if prediction.outcome is None:
        return f"predicting {call}…"
    text = f"predicted: {cut(prediction.outcome, 80)}"
    if prediction.confidence is not None:
        text += f" · p {prediction.confidence:.2f}"
    return text


def code_lenses(uri: str, functions: list[Function], predictions: dict[str, Prediction | None],
                engine_error: str | None = None) -> list[types.CodeLens]:
    lenses = []
    for function in functions:
        if function.call is None:
            continue
        line = function.def_line - 1
        title = lens_title(function, predictions.get(function.name), engine_error)
        command = types.Command(title=title, command=DEBUG_COMMAND, arguments=[uri, function.name, function.call])
        lenses.append(types.CodeLens(range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                                     command=command))
    return lenses


def runs_text(values: list[str]) -> str:
    shown = [cut(v) for v in values]
    if len(shown) > MAX_RUNS_SHOWN:
        shown = [*shown[: MAX_RUNS_SHOWN - 1], "…", shown[-1]]
    return " | ".join(shown)


def line_label(prediction: Prediction, line: int) -> str | None:
    """The hint of one line: the arguments, what it binds run by run, how it ends the call."""
    parts: list[str] = []
    visits = prediction.lines.get(line, [])
    if visits:
        names: list[str] = []
        for visit in visits:
            names += [n for n in visit.bound if n not in names]
        for name in names:
            values = [visit.bound[name] for visit in visits if name in visit.bound]
            parts.append(f"{name} = {runs_text(values)}")
        if len(visits) > 1:
            parts.append(f"×{len(visits)}")
    note = prediction.notes.get(line)
    if note:
        parts.append(cut(note, 80))
    return "  ".join(parts) if parts else None


def inlay_hints(lines: list[str], functions: list[Function], predictions: dict[str, Prediction | None],
                first: int, last: int) -> list[types.InlayHint]:
    """Hints for lines first..last (0-based, inclusive)."""
    hints = []
    for function in functions:
        prediction = predictions.get(function.name)
        if prediction is None:
            continue
        for line in range(max(function.def_line, first + 1), min(function.end_line, last + 1) + 1):
            label = line_label(prediction, line)
            if label is None or line > len(lines):
                continue
            hints.append(types.InlayHint(
                position=types.Position(line - 1, len(lines[line - 1])), label=f"  # {label}",
                kind=None, padding_left=True,
                tooltip=f"Predicted by the model for {function.call} (nothing ran)"))
    return hints


def name_at(text: str, character: int) -> str | None:
    for match in _NAME.finditer(text):
        if match.start() <= character <= match.end():
            return match.group(0)
    return None


def hover_text(prediction: Prediction, line: int, name: str) -> str | None:
    visits = prediction.lines.get(line, [])
    runs = []
    for visit in visits:
        before, after = visit.before.get(name), visit.bound.get(name)
        if after is not None:
            runs.append(f"{before} → {after}" if before is not None else after)
        elif before is not None:
            runs.append(before)
    if not runs:
        return None
    shown = "\n".join(f"{i}. `{cut(run, 200)}`" for i, run in enumerate(runs[:20], 1))
    more = f"\n… and {len(runs) - 20} more runs" if len(runs) > 20 else ""
    return (f"**{name}** at line {line}, predicted for `{cut(prediction.call, 80)}` "
            f"({len(runs)} run{'s' if len(runs) != 1 else ''}; nothing ran):\n\n{shown}{more}")


def code_actions(uri: str, function: Function | None) -> list[types.CodeAction]:
    if function is None:
        return []
    command = types.Command(title=INFER_TITLE, command=INFER_COMMAND, arguments=[uri, function.name])
    return [types.CodeAction(title=INFER_TITLE, kind=types.CodeActionKind.Refactor, command=command)]
