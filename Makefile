# plangraph — set-up, demo and tests. Everything runs offline.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := 1
export LANGSMITH_TRACING := false
export ORT_DISABLE_TELEMETRY := 1
export ANONYMIZED_TELEMETRY := False
export TOKENIZERS_PARALLELISM := false
export MPLBACKEND := Agg

.PHONY: install demo test lint typecheck pytest clean docs soak

$(BIN)/.installed: pyproject.toml constraints.txt
	@command -v $(PY) >/dev/null || { echo "need $(PY) (Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first and alone: the local CPU build; an unpinned torch pulls GBs of CUDA wheels.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	# Export the packaged MiniLM to ONNX once now (PLANGRAPH_MODEL_CACHE, default ~/.cache/plangraph),
	# so the first `plangraph run` does not pay it.
	$(BIN)/python -c "from graphs.context import Context; from graphs.services import embeddings_for; embeddings_for(Context(embeddings='minilm')).embed_query('warm up')"
	touch $@

install: $(BIN)/.installed

demo: install
	rm -rf .plangraph-demo
	PLANGRAPH_DATA_DIR=.plangraph-demo $(BIN)/plangraph run "帮我生成一份光伏经济测算报告" \
	  --conversation demo --answer "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"

lint: install
	$(BIN)/ruff check --no-cache .
	$(BIN)/ruff format --check --no-cache .

typecheck: install
	$(BIN)/mypy graphs nodes tools memory plangraph

pytest: install
	$(BIN)/pytest -q -p no:cacheprovider

test: lint typecheck pytest

# README graph block + docs/img/plan-s1.{dot,svg} (needs Graphviz `dot`); commit the result.
docs: install
	$(BIN)/python -m plangraph.docs_gen

clean:
	rm -rf $(VENV) .plangraph .plangraph-demo .pytest_cache .mypy_cache .ruff_cache

# Failure injection that takes minutes (full SIGKILL matrix, long fuzzing); see docs/reliability.md.
soak: install
	$(BIN)/pytest -q -p no:cacheprovider -m soak tests/reliability
