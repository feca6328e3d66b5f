"""The model worker: `ndb worker` serves a model to many debug sessions over websockets.

protocol.py (messages), server.py (the server), client.py (WorkerEngine, the adapter's side),
batching.py (dynamic batching), vllm_engine.py (the vLLM engine), bench.py (`ndb bench worker`),
commands.py (the CLI commands). See docs/worker.md.
"""
