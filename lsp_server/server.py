"""`build_server`: the pygls language server over examples, predictions, features and inference.

Handlers run on pygls's event loop and never wait on the model: they parse the document (ast only),
read the predictions cached for its source hash, and return at once; a prediction that lands later
asks the editor to refresh (workspace/codeLens/refresh, workspace/inlayHint/refresh) and sends the
notification `ndb/predicted` {uri, status}. Input inference runs on its own thread; the command's
reply waits for it, the editor does not.

Commands (workspace/executeCommand):
- `ndb.setLaunchEntry` [uri, call]: the entry of a Neural Debug launch of that file; it becomes the
  example of the function it calls (before comments and doctests).
- `ndb.inferInputs` [uri, function, value, k?]: up to k argument lists confirmed to return `value`.
- `ndb.prediction` [uri, function]: the cached prediction of that function's example, as JSON (null
  when none yet): for tools and tests.
- `ndb.status` []: the engine's start-up error if any, and how the latest prediction jobs ended
  (done, failed, cancelled; with their source hash and steps).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_server import examples, features
from lsp_server.inference import DEFAULT_K, InferenceSettings, infer_inputs, summary
from lsp_server.predictions import DEFAULT_DEBOUNCE, DEFAULT_MAX_STEPS, Prediction, Predictor
from model_backend.engine.base import Engine, EngineError
from model_backend.worker.client import launch_engine

log = logging.getLogger(__name__)
NAME, VERSION = "ndb-lsp", "0.1.0"
MAX_SOURCE_CHARS = 200_000  # a larger document gets no predictions (the model's header could not hold it)


@dataclass(frozen=True)
class Settings:
    model: str | None = None  # checkpoint directory (None: the shipped model)
    worker: str | None = None  # ws:// URL of a model worker
    max_steps: int = DEFAULT_MAX_STEPS
    debounce: float = DEFAULT_DEBOUNCE
    inference: InferenceSettings = InferenceSettings()

    def engine_factory(self) -> Callable[[], Engine]:
        return lambda: launch_engine("neural", model=self.model, worker=self.worker)


class NeuralLanguageServer(LanguageServer):
    def __init__(self, settings: Settings) -> None:
        super().__init__(NAME, VERSION, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = settings
        self.loop: asyncio.AbstractEventLoop | None = None
        self.launch_entries: dict[str, dict[str, str]] = {}  # uri -> function -> entry
        self.predictor = Predictor(settings.engine_factory(), self._predicted, settings.max_steps, settings.debounce)
        self.inferring: dict[str, threading.Event] = {}

    # ---- documents ------------------------------------------------------------------------------
    def source(self, uri: str) -> str | None:
        try:
            text = self.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001 - an unknown or unreadable document has no source
            return None
        return text if len(text) <= MAX_SOURCE_CHARS else None

    def functions(self, uri: str, source: str) -> list[examples.Function]:
        return examples.functions(source, self.launch_entries.get(uri))

    def predictions(self, uri: str, source: str) -> dict[str, Prediction | None]:
        digest = examples.source_hash(source)
        return {f.name: self.predictor.get(digest, f.call) if f.call else None for f in self.functions(uri, source)}

    def document(self, uri: str) -> tuple[str, list[examples.Function], dict[str, Prediction | None]] | None:
        """The document's source, its functions and their cached predictions; None for no document."""
        source = self.source(uri)
        if source is None:
            return None
        return source, self.functions(uri, source), self.predictions(uri, source)

    def schedule(self, uri: str, debounce: bool = True) -> None:
        """Predict the document's example calls: after the debounce delay for an edit, at once otherwise."""
        source = self.source(uri)
        if source is None:
            return
        calls = [f.call for f in self.functions(uri, source) if f.call]
        path = unquote(urlparse(uri).path) or uri
        self.predictor.schedule(uri, examples.source_hash(source), source, calls, path, debounce)

    # ---- from the predictor's thread ------------------------------------------------------------
    def _predicted(self, uri: str) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._refresh, uri)

    def _refresh(self, uri: str) -> None:
        workspace = self.client_capabilities.workspace
        try:
            if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
                self.workspace_code_lens_refresh(None)
            if workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support:
                self.workspace_inlay_hint_refresh(None)
            self.protocol.notify("ndb/predicted", {"uri": uri})
        except Exception:  # noqa: BLE001 - the connection may be closing
            log.debug("refresh of %s not sent", uri, exc_info=True)


def build_server(settings: Settings) -> NeuralLanguageServer:
    server = NeuralLanguageServer(settings)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: NeuralLanguageServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.predictor.warm_up()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: NeuralLanguageServer, params: None) -> None:
        ls.predictor.close(wait=0.0)  # the reply must not wait for the step under way
        for cancel in ls.inferring.values():
            cancel.set()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NeuralLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, debounce=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NeuralLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NeuralLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.predictor.forget(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: NeuralLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        found = ls.document(uri)
        return features.code_lenses(uri, found[1], found[2], ls.predictor.engine_error) if found else []

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hint(ls: NeuralLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        found = ls.document(params.text_document.uri)
        if found is None:
            return []
        return features.inlay_hints(found[0].splitlines(), found[1], found[2], params.range.start.line,
                                    params.range.end.line)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: NeuralLanguageServer, params: types.HoverParams) -> types.Hover | None:
        uri, line = params.text_document.uri, params.position.line + 1
        source = ls.source(uri)
        if source is None:
            return None
        lines = source.splitlines()
        if line > len(lines):
            return None
        name = features.name_at(lines[line - 1], params.position.character)
        function = examples.function_at(source, line, ls.launch_entries.get(uri))
        if name is None or function is None or function.call is None:
            return None
        prediction = ls.predictor.get(examples.source_hash(source), function.call)
        text = features.hover_text(prediction, line, name) if prediction else None
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Refactor]))
    def code_action(ls: NeuralLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        source = ls.source(uri)
        if source is None:
            return []
        function = examples.function_at(source, params.range.start.line + 1)
        return features.code_actions(uri, function)

    @server.command("ndb.setLaunchEntry")
    def set_launch_entry(ls: NeuralLanguageServer, *args: Any) -> dict[str, object]:
        if len(args) != 2 or not all(isinstance(a, str) for a in args):
            return {"ok": False, "error": "ndb.setLaunchEntry takes [uri, call]"}
        uri, call = args
        name = examples.called_name(call) if examples.call_of(call) else None
        if name is None:
            return {"ok": False, "error": f"not a call of a function: {call!r}"}
        ls.launch_entries.setdefault(uri, {})[name] = call.strip()
        ls.schedule(uri, debounce=False)
        return {"ok": True, "function": name}

    @server.command("ndb.prediction")
    def prediction(ls: NeuralLanguageServer, *args: Any) -> dict[str, object] | None:
        if len(args) != 2 or not all(isinstance(a, str) for a in args):
            return None
        uri, name = args
        source = ls.source(uri)
        if source is None:
            return None
        found = ls.predictions(uri, source).get(name)
        return found.to_json() if found else None

    @server.command("ndb.status")
    def status(ls: NeuralLanguageServer, *args: Any) -> dict[str, object]:
        return {"engineError": ls.predictor.engine_error, "ended": list(ls.predictor.ended)}

    @server.command("ndb.inferInputs")
    async def infer(ls: NeuralLanguageServer, *args: Any) -> dict[str, object]:
        if not 3 <= len(args) <= 4 or not all(isinstance(a, str) for a in args[:3]):
            return {"error": "ndb.inferInputs takes [uri, function, value, k?]"}
        uri, function, value = args[:3]
        k = args[3] if len(args) == 4 and isinstance(args[3], int) and 1 <= args[3] <= 20 else DEFAULT_K
        source = ls.source(uri)
        if source is None:
            return {"error": f"no open document {uri}"}
        previous = ls.inferring.pop(uri, None)
        if previous is not None:
            previous.set()  # one inference per document: a new request ends the one under way
        cancel = ls.inferring[uri] = threading.Event()
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                None, infer_inputs, settings.engine_factory(), source, function, value.strip(), k,
                settings.inference, cancel)
        except EngineError as exc:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, str(exc)))
            return {"error": str(exc)}
        finally:
            if ls.inferring.get(uri) is cancel:
                del ls.inferring[uri]
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, summary(result)))
        return result

    return server
