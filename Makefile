# writeback's two commands, each creating what it needs in .venv/:
#   make history   the history over the torch builds in builds.txt, published to html/
#   make test      the tests (ruff, then pytest)
# Options: make history BUILDS=builds-long.txt   (another builds file; both are kept)
#          make history ONLY="torch-2.15.0"      (only these builds)
#          make history ISA=avx2                 (measure as this host's avx2 machine)
#          make history SIZES=3                  (a quick check into .asv/quick/: results/ untouched)
#          make history SHARD=1/2                (only the 1st of 2 slices of the builds: a CI job)
#          make history BENCH='^snapshot_swap\.' (only the benchmarks whose name matches; the
#                                                rest run next time)
#          make merge FROM="dir1 dir2"           (merge shards' results folders, publish, report)
#          make asv ARGS="find ..."              (asv itself, with this project's machine;
#                                                .venv/bin/asv is the same, for any argument)
#          make expected                         (latest results against expected/<isa>.csv)
#          make compare BASE=torch-2.15.0 HEAD=my-patch   (what flipped or moved: tools/compare.py)
#          make timeline                         (per fault, the releases where it is wrong:
#                                                tools/timeline.py, from the committed results)
#          PYTHON=python3.11                     (the Python that creates .venv/)
# Every value reaches the commands as it is, never read by the shell: ONLY, FROM and ARGS are
# split at spaces, each word one argument (quotes inside them are kept as characters); every
# other value is one argument, spaces included.

PYTHON ?= python3
BUILDS ?= builds.txt
ONLY ?=
ISA ?=
SIZES ?=
SHARD ?=
BENCH ?=
FROM ?=
ARGS ?=
BASE ?=
HEAD ?=
VENV := .venv
PY := $(VENV)/bin/python

# q: the value as one shell word (in single quotes; a ' inside it becomes '\'')
q = '$(subst ','\'',$(1))'
# each_word: each space-separated word of the value as one shell word
each_word = $(foreach word,$(1),$(call q,$(word)))

.PHONY: history merge test lint asv expected compare timeline

$(VENV)/.installed-tools: requirements/tools.txt tools/asv
	@bash tools/preflight.sh history
	@test -x $(call q,$(PY)) || $(call q,$(PYTHON)) -m venv $(call q,$(VENV))
	$(call q,$(PY)) -m pip install --quiet --disable-pip-version-check -r requirements/tools.txt
	@install -m 755 tools/asv $(call q,$(VENV)/bin/asv)
	@touch $(call q,$@)

$(VENV)/.installed-test: requirements/test.txt requirements/tools.txt tools/asv
	@bash tools/preflight.sh test
	@test -x $(call q,$(PY)) || $(call q,$(PYTHON)) -m venv $(call q,$(VENV))
	$(call q,$(PY)) -m pip install --quiet --disable-pip-version-check -r requirements/test.txt
	@install -m 755 tools/asv $(call q,$(VENV)/bin/asv)
	@touch $(call q,$@) $(call q,$(VENV)/.installed-tools)

history: $(VENV)/.installed-tools
	$(if $(ISA),WRITEBACK_ISA=$(call q,$(ISA))) $(if $(SIZES),WRITEBACK_SIZES=$(call q,$(SIZES))) \
	  $(call q,$(PY)) -m tools.history --builds $(call q,$(BUILDS)) \
	  $(if $(ONLY),--only $(call each_word,$(ONLY))) $(if $(SHARD),--shard $(call q,$(SHARD))) \
	  $(if $(BENCH),--bench $(call q,$(BENCH)))

merge: $(VENV)/.installed-tools
	$(call q,$(PY)) -m tools.merge --builds $(call q,$(BUILDS)) $(call each_word,$(FROM))

expected: $(VENV)/.installed-tools
	$(call q,$(PY)) -m tools.expected check

compare: $(VENV)/.installed-tools
	$(call q,$(PY)) -m tools.compare $(call q,$(BASE)) $(call q,$(HEAD))

timeline: $(VENV)/.installed-tools
	$(call q,$(PY)) -m tools.timeline

asv: $(VENV)/.installed-tools
	$(call q,$(PY)) -m tools.asv_project $(call each_word,$(ARGS))

test: lint
	$(call q,$(PY)) -m pytest

lint: $(VENV)/.installed-test
	$(call q,$(PY)) -m ruff check --no-cache benchmarks tools tests
	$(call q,$(PY)) -m ruff format --no-cache --check benchmarks tools tests
