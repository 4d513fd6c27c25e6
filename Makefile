# writeback's two commands. `make history`: the history over the torch builds in builds.txt,
# published to html/. `make test`: the tests. Both create their own environment in .venv/.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test

.PHONY: test lint history clean-env

$(STAMP): requirements/test.txt requirements/tools.txt
	@bash tools/preflight.sh
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/test.txt
	@touch $@

test: $(STAMP)
	$(PY) -m ruff check benchmarks tools tests
	$(PY) -m ruff format --check benchmarks tools tests
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check benchmarks tools tests
	$(PY) -m ruff format --check benchmarks tools tests

clean-env:
	rm -rf $(VENV)
