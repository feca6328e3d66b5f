"""`ndb mcp`: the neural debugger as a Model Context Protocol server, for coding agents.

One process role, like `dap_server` (the IDE's adapter) and `model_backend.worker` (the model server):
an agent starts debugging sessions, steps them forwards and backwards, reads states, sets variables,
asks which inputs give a return value, and compares the model's states with the real run's.

| module | role |
|---|---|
| `sessions.py` | `Limits`, `Session` (one engine, its breakpoints and trajectory), `Sessions` (the table, its limits). |
| `render.py` | The compact text an agent reads: a state, the program with line numbers, the trajectory. |
| `queries.py` | What needs no session or a second engine: `predict_return`, `infer_inputs`, `compare`. |
| `tools.py` | `build_server`: the MCP tools and resources over the two modules above. |
| `transport.py` | stdio, and streamable HTTP behind a bearer-token check on every request. |
| `commands.py` | The `ndb mcp` command. |

Safety: only the oracle engine runs the program, in its sandbox (model_backend.sandbox). A neural
session never runs code: entry arguments are literals (or builtins the grammar computes), set_variable
takes literals, evaluate computes on the shown values (dap_server.evaluator).
"""
