# The two commands of the README. Everything installs into .venv from the project's own pinned files.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PIP     := $(BIN)/pip install --disable-pip-version-check -q -c constraints.txt
DEMO    ?= $(CURDIR)/demo-home
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false

.PHONY: run test install install-test clean

run: $(VENV)/.run
	AGENTOS_HOME=$(DEMO) $(BIN)/agentos demo

test: $(VENV)/.test
	$(BIN)/python -m pytest

install: $(VENV)/.run
install-test: $(VENV)/.test

$(VENV)/bin/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q -r requirements/bootstrap.txt

$(VENV)/.run: $(VENV)/bin/python requirements/run.txt constraints.txt pyproject.toml
	$(PIP) -r requirements/run.txt
	$(PIP) --no-deps --no-build-isolation -e .
	touch $@

# torch==2.13.0 goes in on its own, first: the CPU wheel on disk, never the CUDA build.
$(VENV)/.test: $(VENV)/.run requirements/test.txt
	$(PIP) torch==2.13.0
	$(PIP) -r requirements/test.txt
	touch $@

clean:
	rm -rf $(VENV) $(DEMO)
