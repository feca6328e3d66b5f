"""`ndb bench lsp`: what an editor waits for from `ndb lsp` (a real server over stdio, the shipped model).

1. Code lens latency: a 10-line function's example opened in a new document, with the model already
   loaded (a first document warms it up), timed from didOpen until textDocument/codeLens reads
   "predicted: ..." (an opened document is not debounced; the client polls every 50 ms). The model predicts the run one
   step at a time, so the figure grows with the steps of the run (`predicted_steps`).
2. Keystrokes while a prediction runs: each one a didChange and a hover request right after it, timed
   from the edit to the hover's answer; first in another document while the prediction runs (how many
   came while it was running is counted), then in the predicted document itself (each edit cancels it)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TEN_LINES = '''def stats(xs):
    total = 0
    count = 0
    largest = None
    for x in xs:
        total += x
        count += 1
        if largest is None or x > largest:
            largest = x
    return total, count, largest
# ndb: stats([3, 1, 2])
'''
WARM = "def double(x):\n    return x * 2\n# ndb: double(4)\n"
POLL = 0.05


async def _lens_title(client: LanguageClient, uri: str) -> str | None:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    titles = [lens.command.title for lens in lenses or [] if lens.command]
    return titles[0] if titles else None


async def _until_predicted(client: LanguageClient, uri: str, limit: float) -> tuple[float, str]:
    began = time.monotonic()
    while time.monotonic() - began < limit:
        title = await _lens_title(client, uri)
        if title and not title.startswith("predicting"):
            return time.monotonic() - began, title
        await asyncio.sleep(POLL)
    raise TimeoutError(f"no code lens prediction within {limit} s")


async def _prediction(client: LanguageClient, uri: str, function: str) -> dict[str, Any] | None:
    found = await client.workspace_execute_command_async(types.ExecuteCommandParams("ndb.prediction", [uri, function]))
    return found if isinstance(found, dict) else None


async def _until_running(client: LanguageClient, uri: str, limit: float) -> None:
    began = time.monotonic()
    while time.monotonic() - began < limit:
        found = await _prediction(client, uri, "stats")
        if found is not None and found["status"] == "running":
            return
        await asyncio.sleep(POLL)
    raise TimeoutError(f"the prediction of {uri} did not start within {limit} s")


async def _keystrokes(client: LanguageClient, uri: str, text: str, count: int,
                      predicted: str | None) -> tuple[list[float], int]:
    """`count` edits of `uri` (a character added to a comment), each followed by a hover request: the
    seconds from the edit to the hover's answer; and how many came while `predicted`'s prediction ran."""
    waits, during = [], 0
    for i in range(count):
        began = time.monotonic()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
            [types.TextDocumentContentChangeWholeDocument(text=text + "#" * (i + 1) + "\n")]))
        await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(5, 9)))
        waits.append(time.monotonic() - began)
        if predicted is not None:
            found = await _prediction(client, predicted, "stats")
            during += int(found is not None and found["status"] == "running")
        await asyncio.sleep(0.02)
    return waits, during


def _figures(waits: list[float]) -> dict[str, float]:
    ordered = sorted(waits)
    return {"median_ms": round(1000 * statistics.median(ordered), 1),
            "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1),
            "max_ms": round(1000 * ordered[-1], 1)}


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))


async def _bench(keystrokes: int, model: str | None, limit: float) -> dict[str, Any]:
    client = LanguageClient("ndb-bench", "1")

    @client.feature("ndb/predicted")
    def predicted(params: Any) -> None:  # progress notices: the bench polls the lens instead
        return None

    args = ["-m", "dap_server", "lsp"] + (["--model", model] if model else [])
    await client.start_io(sys.executable, *args)
    try:
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
        client.initialized(types.InitializedParams())
        _open(client, "file:///bench/warm.py", WARM)
        cold, _ = await _until_predicted(client, "file:///bench/warm.py", limit)
        uri = "file:///bench/stats.py"
        _open(client, uri, TEN_LINES)
        warm, title = await _until_predicted(client, uri, limit)
        found = await _prediction(client, uri, "stats")
        # Keystrokes while the model predicts the same function for another call.
        typing = "file:///bench/typing.py"
        edited = TEN_LINES.replace("stats([3, 1, 2])", "stats([5, 4, 9, 2])")
        _open(client, typing, edited)
        await _until_running(client, typing, limit)
        _open(client, "file:///bench/scratch.py", "")
        other, during = await _keystrokes(client, "file:///bench/scratch.py", "", keystrokes, typing)
        same, _ = await _keystrokes(client, typing, edited, keystrokes, None)
        return {
            "first_lens_with_model_load_s": round(cold, 2),
            "lens_10_line_function_s": round(warm, 2),
            "lens_title": title,
            "predicted_steps": found["steps"] if found else None,
            "keystrokes": keystrokes,
            "other_document_while_predicting": {**_figures(other), "during_prediction": during},
            "predicted_document_cancelling": _figures(same),
        }
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def run_bench(keystrokes: int = 50, model: str | None = None, limit: float = 900.0) -> dict[str, Any]:
    return asyncio.run(_bench(keystrokes, model, limit))
