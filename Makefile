# writeback's two commands, each creating what it needs in .venv/:
#   make history   the history over the torch builds in builds.txt, published to html/
#   make test      the tests (ruff, then pytest)
# Options: make history BUILDS=builds-long.txt   (another builds file)
#          make history ONLY="torch-2.15.0"      (only these builds)

PYTHON ?= python3
BUILDS ?= builds.txt
ONLY ?=
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: history test lint

$(VENV)/.installed-tools: requirements/tools.txt
	@bash tools/preflight.sh history
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/tools.txt
	@touch $@

$(VENV)/.installed-test: requirements/test.txt requirements/tools.txt
	@bash tools/preflight.sh test
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/test.txt
	@touch $@ $(VENV)/.installed-tools

history: $(VENV)/.installed-tools
	$(PY) tools/history.py --builds $(BUILDS) $(if $(ONLY),--only $(ONLY))

test: lint
	$(PY) -m pytest

lint: $(VENV)/.installed-test
	$(PY) -m ruff check benchmarks tools tests
	$(PY) -m ruff format --check benchmarks tools tests
