"""`ndb lsp` end to end: a pytest-lsp client against the real server, with the shipped model.

One server serves the module (the model loads once); every feature is asked of it as an editor asks:
code lens, inlay hints, hover, the code action and its inference, an edit that cancels a prediction
under way, documents that are not Python, and bad command arguments, after which it still answers.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Union

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = '''# ndb: double(4)
def double(x):
    return x * 2


def total(xs):
    """Twice the sum.

    >>> total([1, 2])
    """
    t = 0
    for x in xs:
        t += x * 2
    return t


def no_example(y):
    return y + 1
'''
URI = "file:///work/example.py"
LOOP_LINE = 13  # `t += x * 2`, 1-based
SERVER = [sys.executable, "-m", "dap_server.cli", "lsp", "--max-steps", "12", "--debounce", "0.2",
          "--infer-seconds", "120", "--infer-samples", "2", "--infer-checks", "4"]
WAIT = 600.0  # a loaded 2-core machine: the model's load and the first predictions take their time


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    # lsprotocol 2025.0.0 reads any code action with a `command` key as a Command, though a CodeAction's
    # `command` is an object and a Command's a string; VS Code tells them apart by that type, and so does this.
    def command_or_action(obj: Any, _: type) -> types.Command | types.CodeAction:
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter = lsp_client.protocol._converter
    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)  # noqa: UP007
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={}))
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


async def command(client: LanguageClient, name: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments)))


async def finished(client: LanguageClient, uri: str, function: str, complete: bool = True) -> dict[str, Any]:
    """The prediction of `function`'s example once it is done (its lines phase too, with `complete`)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = await command(client, "ndb.prediction", uri, function)
        if found is not None and found["status"] in ("done", "failed"):
            return dict(found)
        if not complete and found is not None and found["outcome"] is not None:
            return dict(found)
        await asyncio.sleep(0.5)
    raise AssertionError(f"no prediction of {function} within {WAIT} s")


async def test_code_lens_shows_the_predicted_return_and_starts_a_session(client: LanguageClient) -> None:
    open_document(client, URI, PROGRAM)
    first = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(URI)))
    assert first is not None and {lens.range.start.line for lens in first} == {1, 5}  # no lens without an example
    predicted = await finished(client, URI, "double", complete=False)
    assert predicted["outcome"] == "returns 8", predicted
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(URI)))
    assert lenses is not None
    lens = next(lens for lens in lenses if lens.range.start.line == 1)
    assert lens.command is not None
    assert lens.command.title == f"predicted: returns 8 · p {predicted['confidence']:.2f}"
    assert 0.0 < predicted["confidence"] <= 1.0
    assert lens.command.command == "neuralDebug.debugCall"
    assert list(lens.command.arguments or []) == [URI, "double", "double(4)"]


async def test_inlay_hints_show_what_each_line_binds_with_loop_counts(client: LanguageClient) -> None:
    predicted = await finished(client, URI, "total")
    assert predicted["complete"], predicted
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        types.TextDocumentIdentifier(URI), types.Range(types.Position(0, 0), types.Position(30, 0))))
    assert hints is not None
    by_line = {hint.position.line + 1: str(hint.label) for hint in hints}
    assert by_line[6] == "  # xs=[1, 2]"  # the arguments on the def line
    assert by_line[11] == "  # t = 0"
    assert by_line[12] == "  # x = 1 | 2  ×3"  # the loop's header runs once more, to end the loop
    assert by_line[LOOP_LINE] == "  # t = 2 | 6  ×2"
    assert by_line[14] == "  # returns 6"
    lines = PROGRAM.splitlines()
    for hint in hints:  # each at the end of its line
        assert hint.position.character == len(lines[hint.position.line])


async def test_hover_shows_a_names_predicted_values_at_that_line(client: LanguageClient) -> None:
    await finished(client, URI, "total")
    character = PROGRAM.splitlines()[LOOP_LINE - 1].index("t +=")
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(URI), types.Position(LOOP_LINE - 1, character)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**t** at line 13" in hover.contents.value and "(2 runs; nothing ran)" in hover.contents.value
    assert "1. `0 → 2`" in hover.contents.value and "2. `2 → 6`" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(URI), types.Position(17, 11)))  # no_example: no prediction
    assert nothing is None


async def test_code_action_infers_confirmed_inputs(client: LanguageClient) -> None:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(URI), types.Range(types.Position(2, 4), types.Position(2, 4)),
        types.CodeActionContext(diagnostics=[])))
    assert actions is not None and len(actions) == 1
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.title == "Infer inputs for a return value…"
    assert action.command is not None and action.command.command == "neuralDebug.inferInputs"
    assert list(action.command.arguments or []) == [URI, "double"]
    result = await command(client, "ndb.inferInputs", URI, "double", "8", 2)
    assert result["function"] == "double" and result["returned"] == "8"
    assert 1 <= len(result["confirmed"]) <= 2, result
    import ast

    for arguments in result["confirmed"]:  # the test checks the arithmetic the model confirmed
        assert ast.literal_eval(arguments) * 2 == 8
    refused = await command(client, "ndb.inferInputs", URI, "double", "os.system('x')")
    assert "literal" in refused["error"]


async def test_an_edit_cancels_the_prediction_under_way(client: LanguageClient) -> None:
    uri = "file:///work/edited.py"
    slow = "def walk(n):\n    # ndb: walk(50)\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    open_document(client, uri, slow)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:  # until the lines phase steps
        found = await command(client, "ndb.prediction", uri, "walk")
        if found is not None and found["steps"] > 0:
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("the prediction of walk(50) never started its lines")
    edited = slow.replace("walk(50)", "walk(1)")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangeWholeDocument(text=edited)]))
    after = await finished(client, uri, "walk")
    assert after["call"] == "walk(1)" and after["status"] == "done"
    ended = (await command(client, "ndb.status"))["ended"]
    old = [job for job in ended if job["uri"] == uri and job["call"] == "walk(50)"]
    assert [job["status"] for job in old] == ["cancelled"]
    assert old[0]["steps"] < 12  # stopped before its max steps


async def test_bad_documents_and_arguments_leave_the_server_up(client: LanguageClient) -> None:
    bad = {"file:///work/broken.py": "def f(:\n    return\n# ndb: f(1)\n",
           "file:///work/binary.py": "\x00\ufffd" * 500 + "\n# ndb: g(\n",
           "file:///work/entry.py": "def g(x):\n    return x\n# ndb: g(*[1], **{'a': 2}) + 1\n# ndb: import os\n"}
    open_document(client, URI, PROGRAM)
    for uri, text in bad.items():
        open_document(client, uri, text)
        everywhere = types.Range(types.Position(0, 0), types.Position(10, 0))
        assert not await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        assert not await client.text_document_inlay_hint_async(types.InlayHintParams(
            types.TextDocumentIdentifier(uri), everywhere))
        assert await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(0, 4))) is None
    for arguments in ([], [1, 2], [URI], [URI, "double", 3], [URI, "nope", "1"]):
        result = await command(client, "ndb.inferInputs", *arguments)
        assert "error" in result
    assert (await command(client, "ndb.setLaunchEntry", URI, "not a call"))["ok"] is False
    assert await command(client, "ndb.prediction", "file:///never/opened.py", "f") is None
    refused = "file:///work/refused.py"  # an entry whose argument is code: the neural engine runs none
    open_document(client, refused, "def g(x):\n    return x\n# ndb: g(open('/etc/passwd').read())\n")
    outcome = await finished(client, refused, "g")
    assert outcome["status"] == "failed" and "literal" in outcome["error"], outcome
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(refused)))
    assert lenses and lenses[0].command and lenses[0].command.title.startswith("no prediction of g(open(")
    # still up: the launch entry becomes total's example, predicted and shown
    assert (await command(client, "ndb.setLaunchEntry", URI, "total([5])")) == {"ok": True, "function": "total"}
    predicted = await finished(client, URI, "total", complete=False)
    assert predicted["call"] == "total([5])" and predicted["outcome"] == "returns 10"
