# Two commands for a newcomer: `make reproduce` and `make test`. Both need only Python 3.11 and no API key.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memeval-installed

.PHONY: setup test test-fast reproduce lint clean-reports

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

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
