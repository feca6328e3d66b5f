"""`ndb lsp`: a language server (pygls) that shows the model's predictions in the editor.

For Python files it shows, without running anything:
- a code lens above each function with an example call (`# ndb: f(...)`, a doctest, or the last Neural
  Debug launch's entry): "predicted: returns X · p 0.97" or "raises E"; clicking it starts a Neural Debug
  session at that call (the VS Code extension's command);
- inlay hints: what each line binds in the predicted run, with the number of runs of a loop's lines;
- hover: a name's predicted values at that line;
- a code action, "Infer inputs for a return value…": k argument lists the model confirms.

| module | role |
|---|---|
| `examples.py` | The document's top-level functions and each one's example call (ast only). |
| `predictions.py` | `Predictor`: predicted runs on one worker thread, cached by source hash, debounced, cancelled on edit. |
| `features.py` | Code lenses, inlay hints, hover text and code actions from cached predictions (lsprotocol types). |
| `inference.py` | The code action's input inference (model_backend.engine.infer), k confirmed argument lists. |
| `server.py` | `build_server`: the pygls handlers and `ndb.*` commands; never waits on the model. |
| `commands.py` | `ndb lsp` and `ndb bench lsp`. |
| `bench.py` | The benchmark: code lens latency, and a keystroke's wait while the model works. |

Safety: the engine is the neural one only (in process or a model worker's); the user's code never runs.
"""
