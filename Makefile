# utcgen: `make generate` runs the main job offline; `make test` runs the tests.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install generate test bench bench-catalog clean

install: $(STAMP)

# torch first, from its CPU build, so nothing later pulls a CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

generate: install
	$(BIN)/utcgen generate --out output

test: install
	$(BIN)/pytest -q

bench-catalog: install
	$(BIN)/python bench/bench_catalog.py

bench: install
	$(BIN)/python bench/bench_generate.py

clean:
	rm -rf output bench/out .pytest_cache
