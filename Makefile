# The two commands of the README. Everything installs into .venv from the project's own pinned files.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PIP     := $(BIN)/pip install --disable-pip-version-check -q -c constraints.txt
DEMO    ?= $(CURDIR)/demo-home
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false

.PHONY: run test test-unit install install-test clean llm

run: $(VENV)/.run
	AGENTOS_HOME=$(DEMO) $(BIN)/agentos demo

# Every tier on TEST_WORKERS processes (0: in this one). A test file stays on one worker (the fixtures it shares are
# built once), and the files go out in the order tests/conftest.py gives them, the dearest first
# (--no-loadscope-reorder: xdist would otherwise send the files with the most tests first, the cheap ones, and end on
# one worker running the long ones alone). The slowest tests and the suite's time are printed at the end.
# One worker more than the cores: a worker spends part of its time waiting (a server starting, a subprocess it runs),
# and the extra one keeps the cores busy then (measured on two cores: 82% of them busy with two workers, 94% with
# three; the suite 663 s against 623 s).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: $(VENV)/.test
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The inner loop: the unit tier only (tests/kit/tiers.py), about a minute; `make test` still runs every tier.
test-unit: $(VENV)/.test
	$(BIN)/python -m pytest -m unit -q

install: $(VENV)/.run
install-test: $(VENV)/.test

$(VENV)/bin/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q -r requirements/bootstrap.txt

$(VENV)/.run: $(VENV)/bin/python requirements/run.txt constraints.txt pyproject.toml
	$(PIP) -r requirements/run.txt
	$(BIN)/pip uninstall --disable-pip-version-check -q -y agentos-memory  # the distribution's name before issue 41: its 21 top-level names
	$(PIP) --no-deps --no-build-isolation -e .
	touch $@

# torch==2.13.0 goes in on its own, first: the CPU wheel on disk, never the CUDA build.
$(VENV)/.test: $(VENV)/.run requirements/test.txt
	$(PIP) torch==2.13.0
	$(PIP) -r requirements/test.txt
	touch $@

# A local chat model (llama.cpp's server, Qwen2.5-Coder-1.5B) on 127.0.0.1:$(LLM_PORT): set up in .llm/ on first use
# (a 15-minute build, a 1.1 GB model), then served until stopped. Not part of run, test or CI.
LLM_PORT ?= 8090
llm:
	LLM_PORT=$(LLM_PORT) PY=$(PY) bash deployments/llm.sh

clean:
	rm -rf $(VENV) $(DEMO)
