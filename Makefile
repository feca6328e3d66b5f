# Every target installs what it needs first (a virtual environment in .venv).
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck pytest demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0   # the local CPU wheel; must come before anything that needs torch
	$(PY) -m pip install -q -e ".[dev,data]"
	touch $(STAMP)

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy model_backend dap_server

pytest: install
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: install
	$(BIN)/ndb debug examples/demo.py --entry "word_stats(['neural', 'debugger', 'dap'])" < examples/demo_session.txt

bench: install
	$(BIN)/ndb bench tracer
	$(BIN)/ndb bench dap examples/loop.py --steps 300

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
