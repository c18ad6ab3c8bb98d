# utcgen: `make generate` runs the main job offline; `make test` runs the tests (`make test-fast`: no slow ones).
# The virtualenv is built by the first supported interpreter .ci/find-python finds (PY=... if set, then
# python3.11, python3.12, python3, ...; the versions allowed are pyproject.toml's requires-python).
PY      ?=
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install generate test test-fast test-unit test-integration test-e2e lint bench bench-catalog bench-quality bench-faults bench-scale clean

# A .venv whose interpreter is missing or unsupported (say, made by a python3 that is 3.10) is rebuilt:
# dropping its stamp makes the install recipe run, and that recipe replaces the .venv.
ifneq ($(wildcard $(VENV)),)
ifneq ($(shell sh .ci/find-python --check $(BIN)/python && echo ok),ok)
$(shell rm -f $(STAMP))
endif
endif

install: $(STAMP)

# torch first, from its CPU build, so nothing later pulls a CUDA build.
$(STAMP): pyproject.toml .ci/find-python
	@python=$$(PY='$(PY)' sh .ci/find-python) || exit 1; \
	if [ -e $(VENV) ] && ! sh .ci/find-python --check $(BIN)/python; then \
		echo "$(VENV) was made by a missing or unsupported interpreter: rebuilding it with $$python"; \
		rm -rf $(VENV); \
	fi; \
	if [ ! -x $(BIN)/python ]; then \
		echo "creating $(VENV) with $$python ($$($$python --version 2>&1))"; \
		$$python -m venv $(VENV) || exit 1; \
	fi
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

generate: install
	$(BIN)/utcgen generate --out output

# ruff (lint and import order) and pyright (types; its node comes from the nodejs extra), configured in pyproject.toml.
LINT := $(BIN)/ruff check . && $(BIN)/pyright --project pyproject.toml

# Everything (what CI runs through .ci/run), then the lint step; both run, and either failing fails the target.
test: install
	@status=0; \
	$(BIN)/pytest -q || status=$$?; \
	echo "lint: ruff check . && pyright"; \
	$(LINT) || { [ $$status -ne 0 ] || status=1; }; \
	exit $$status

# The tests not marked slow (no subprocess, no Prefect, dask, training or wheel builds; local HTTP servers in
# process only where a test says so).
test-fast: install
	$(BIN)/pytest -q -m "not slow"

# One tier at a time (tests/unit/<package>, tests/integration, tests/e2e: CONTRIBUTING.md says which is which).
test-unit: install
	$(BIN)/pytest -q tests/unit

test-integration: install
	$(BIN)/pytest -q tests/integration

test-e2e: install
	$(BIN)/pytest -q tests/e2e

lint: install
	$(LINT)

bench-catalog: install
	$(BIN)/python bench/bench_catalog.py

bench-faults: install
	$(BIN)/python bench/bench_faults.py

# Peak memory and wall time of whole offline runs at 200 and 1,600 dialogues (docs/scale.md).
bench-scale: install
	$(BIN)/python bench/bench_scale.py --n 200 1600

bench: install
	$(BIN)/python bench/bench_generate.py

# Data-quality figures (utcgen audit's Quality section) of 40 offline dialogues on the shipped catalog.
bench-quality: install
	$(BIN)/python bench/bench_quality.py

clean:
	rm -rf output eval-out bench/out .pytest_cache

# ---------------------------------------------------------------- Prefect (docs/orchestration.md)
# `make server` starts a Prefect server in the background (state under .state/prefect),
# `make deploy` registers the deployments of prefect.yaml on a process work pool and
# starts a worker, `make stop` stops both. Then:
#   PREFECT_API_URL=http://127.0.0.1:4200/api .venv/bin/prefect deployment run 'generate-dialogues/default' -p num_dialogues=20
PREFECT_HOST ?= 127.0.0.1
PREFECT_PORT ?= 4200
PREFECT_POOL ?= utcgen-pool
STATE        ?= .state
PREFECT_API  := http://$(PREFECT_HOST):$(PREFECT_PORT)/api
PREFECT_ENV  := PREFECT_HOME=$(abspath $(STATE))/prefect PREFECT_API_URL=$(PREFECT_API)
# waits up to 60 s for GET /api/health to answer 200
WAIT_HEALTHY := for i in $$(seq 1 120); do curl -sf -o /dev/null $(PREFECT_API)/health && exit 0; sleep 0.5; done; \
	echo "prefect server not healthy at $(PREFECT_API); see $(STATE)/server.log" >&2; exit 1

.PHONY: server deploy stop

server: install
	@mkdir -p $(STATE)/prefect
	@if [ -f $(STATE)/server.pid ] && kill -0 $$(cat $(STATE)/server.pid) 2>/dev/null; then \
		echo "prefect server already running (pid $$(cat $(STATE)/server.pid))"; \
	else \
		PREFECT_HOME=$(abspath $(STATE))/prefect setsid $(BIN)/prefect server start \
			--host $(PREFECT_HOST) --port $(PREFECT_PORT) >$(STATE)/server.log 2>&1 & \
		echo $$! >$(STATE)/server.pid; \
		echo "prefect server starting (pid $$!, log $(STATE)/server.log)"; \
	fi
	@$(WAIT_HEALTHY)
	@echo "prefect server healthy: UI http://$(PREFECT_HOST):$(PREFECT_PORT), API $(PREFECT_API)"

deploy: server
	$(PREFECT_ENV) $(BIN)/prefect work-pool inspect $(PREFECT_POOL) >/dev/null 2>&1 || \
		$(PREFECT_ENV) $(BIN)/prefect work-pool create $(PREFECT_POOL) --type process
	$(PREFECT_ENV) $(BIN)/prefect --no-prompt deploy --all
	@if [ -f $(STATE)/worker.pid ] && kill -0 $$(cat $(STATE)/worker.pid) 2>/dev/null; then \
		echo "worker already running (pid $$(cat $(STATE)/worker.pid))"; \
	else \
		$(PREFECT_ENV) setsid $(BIN)/prefect worker start --pool $(PREFECT_POOL) --type process \
			>$(STATE)/worker.log 2>&1 & \
		echo $$! >$(STATE)/worker.pid; \
		echo "worker started (pid $$!, log $(STATE)/worker.log)"; \
	fi
	@echo "run: PREFECT_API_URL=$(PREFECT_API) $(BIN)/prefect deployment run 'generate-dialogues/default' -p num_dialogues=20"

# Each was started by setsid as its own process group: stop the group (worker: its flow runs too).
# A worker that has run flows may hang in its SIGTERM handler: after 5 s the group is killed.
stop:
	@for name in worker server; do \
		pidfile=$(STATE)/$$name.pid; \
		if [ -f $$pidfile ] && kill -0 $$(cat $$pidfile) 2>/dev/null; then \
			pid=$$(cat $$pidfile); kill -TERM -$$pid 2>/dev/null || kill -TERM $$pid; \
			for i in $$(seq 1 20); do kill -0 $$pid 2>/dev/null || break; sleep 0.25; done; \
			if kill -0 $$pid 2>/dev/null; then kill -KILL -$$pid 2>/dev/null || kill -KILL $$pid; sleep 0.5; fi; \
			echo "stopped $$name (pid $$pid)"; \
		fi; \
		rm -f $$pidfile; \
	done
