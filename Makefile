# writeback's two commands, each creating what it needs in .venv/:
#   make history   the history over the torch builds in builds.txt, published to html/
#   make test      the tests (ruff, then pytest)
# Options: make history BUILDS=builds-long.txt   (another builds file; both are kept)
#          make history ONLY="torch-2.15.0"      (only these builds)
#          make history ISA=avx2                 (measure as this host's avx2 machine)
#          make history SIZES=3                  (a quick check into .asv/quick/: results/ untouched)
#          make history SHARD=1/2                (only the 1st of 2 slices of the builds: a CI job)
#          make merge FROM="dir1 dir2"           (merge shards' results folders, publish, report)
#          make asv ARGS="find ..."              (asv itself, with this project's machine)
#          make expected                         (latest results against expected/<isa>.csv)
#          make compare BASE=torch-2.14.1 HEAD=torch-2.15.0   (what flipped or moved)

PYTHON ?= python3
BUILDS ?= builds.txt
ONLY ?=
ISA ?=
SIZES ?=
SHARD ?=
FROM ?=
ARGS ?=
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: history merge test lint asv expected compare

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
	$(if $(ISA),WRITEBACK_ISA=$(ISA)) $(if $(SIZES),WRITEBACK_SIZES=$(SIZES)) \
	  $(PY) -m tools.history --builds $(BUILDS) $(if $(ONLY),--only $(ONLY)) \
	  $(if $(SHARD),--shard $(SHARD)) $(if $(BENCH),--bench '$(BENCH)')

merge: $(VENV)/.installed-tools
	$(PY) -m tools.merge --builds $(BUILDS) $(FROM)

expected: $(VENV)/.installed-tools
	$(PY) -m tools.expected check

compare: $(VENV)/.installed-tools
	$(PY) -m tools.expected compare $(BASE) $(HEAD)

asv: $(VENV)/.installed-tools
	$(PY) -m tools.asv_project $(ARGS)

test: lint
	$(PY) -m pytest

lint: $(VENV)/.installed-test
	$(PY) -m ruff check --no-cache benchmarks tools tests
	$(PY) -m ruff format --no-cache --check benchmarks tools tests
