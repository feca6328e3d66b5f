"""`ndb lsp --worker URL`: the predictions run on a model worker (`ndb worker`, the shipped model), not in
the language server's process."""

from __future__ import annotations

import sys

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from model_backend.engine.neural import DEFAULT_CHECKPOINT
from tests.lsp_server.test_lsp_server import finished, open_document
from tests.model_backend.worker.test_worker import Worker, health

URI = "file:///work/on_worker.py"


@pytest.mark.asyncio
async def test_predictions_run_on_a_model_worker() -> None:
    worker = Worker(DEFAULT_CHECKPOINT)
    try:
        before = health(worker.url).requests
        config = ClientServerConfig(server_command=[sys.executable, "-m", "dap_server", "lsp", "--worker", worker.url,
                                                    "--debounce", "0.1"])
        client = await config.start()
        try:
            await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
            open_document(client, URI, "def double(x):\n    return x * 2\n# ndb: double(4)\n")
            predicted = await finished(client, URI, "double")
            assert predicted["outcome"] == "returns 8" and predicted["complete"], predicted
            lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(URI)))
            assert lenses and lenses[0].command and lenses[0].command.title.startswith("predicted: returns 8 · p ")
            assert health(worker.url).requests >= before + 3  # the start and the steps were the worker's
            await client.shutdown_session()
        finally:
            await client.stop()
    finally:
        worker.stop()
