# memwork — `make help` lists the targets.
PYTHON ?= python3
# `make test PYTHON=python3.13` builds and uses a venv of that Python beside .venv.
VENV ?= $(if $(filter python3,$(PYTHON)),.venv,.venv-$(notdir $(PYTHON)))
# Test processes (pytest-xdist): one per core and two more, at least four. Many tests wait
# on a subprocess or a server, not the CPU. Each process reads the rewritten test modules
# that test-bytecode writes (when each rewrote them itself, three won on two cores). On
# two cores, the whole suite back to back: four 415 s, three 437 s.
# `make test JOBS=0` runs in one process.
JOBS ?= $(shell $(PYTHON) -c 'import os; print(max(4, (os.cpu_count() or 1) + 2))')
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LAYOUT := $(VENV)/layout

.PHONY: help run test test-bytecode test-quick lint format generate bench demo clean

help:  ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# Without pip: the base interpreter's pip puts uv into the venv, and uv installs pip with
# everything else (making a venv with pip, then pip installing uv with it, took ~11 s; this
# way ~4 s).
$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

# lenient mode: an import hook maps memwork.core to core/ and memwork.tui to tui/
# (setup.py). setuptools announces that mode with a page of text on every install; it is
# information only, so it is not shown.
EDITABLE := -e '.[test]' --config-settings editable_mode=lenient
QUIET_SETUPTOOLS := PYTHONWARNINGS="ignore:Editable installation"

# uv installs the project and its packages in ~15 s, bytecode compiled on every core;
# pip took ~45 s (it resolves against every index it is given and compiles on one core).
# pip does it where uv cannot be installed (no pip beside $(PYTHON), no way to PyPI).
$(STAMP): $(BIN)/python pyproject.toml setup.py core/services/recall/_scoring.c
	@if $(PYTHON) -m pip --python $(BIN)/python install -q uv > /dev/null 2>&1; then \
	  echo "installing with uv"; \
	  $(QUIET_SETUPTOOLS) $(BIN)/uv pip install --python $(BIN)/python -q --compile-bytecode \
	    pip $(EDITABLE); \
	else \
	  echo "installing with pip"; \
	  $(BIN)/python -m ensurepip --upgrade > /dev/null && \
	  $(BIN)/python -m pip install -q --upgrade pip && \
	  $(QUIET_SETUPTOOLS) $(BIN)/python -m pip install -q $(EDITABLE); \
	fi
	$(layout)
	touch $(STAMP)

# A view of the installed layout: core/ and tui/ linked under memwork/ as the build maps
# them (setup.py). lint-imports and mypy read the tree through it: tui/ imports core/ as
# `..core`, which resolves only where both sit in one package. Remade on each lint (a new
# memwork/*.py is linked then); new modules under core/ or tui/ appear in it at once.
define layout
	@rm -rf $(LAYOUT) && mkdir -p $(LAYOUT)/memwork
	@ln -s $(CURDIR)/memwork/*.py $(LAYOUT)/memwork/
	@ln -s $(CURDIR)/core $(CURDIR)/tui $(LAYOUT)/memwork/
endef

run: $(STAMP)  ## Open the workbench on a fresh copy of the demo store
	$(BIN)/memwork --demo

# Bytecode once, up front: many tests start memwork processes, and where
# PYTHONDONTWRITEBYTECODE is set each of them would compile every module again. Then
# pytest's rewritten test modules, written once here (even where that variable is set):
# each test process reads them instead of rewriting the whole suite (~6 s of CPU each). A
# collection error is left for the run itself to report.
test-bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q -j 0 memwork core tui tests > /dev/null
	@PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --collect-only -q -p no:cacheprovider \
	  > /dev/null 2>&1 || true

# ruff and the import contracts first (a second); mypy, ~25 s on one core, runs beside the
# bytecode and the tests, and its verdict follows theirs: the target fails if either fails.
test: $(STAMP)  ## Run the whole test suite (and ruff, the import contracts, mypy on core/ and tui/)
	$(style_and_imports)
	@$(MYPY) > $(VENV)/mypy.out 2>&1 & typing=$$!; \
	  $(MAKE) --no-print-directory test-bytecode; \
	  echo "$(BIN)/python -m pytest -n $(JOBS) --dist worksteal"; \
	  $(BIN)/python -m pytest -n $(JOBS) --dist worksteal; tests=$$?; \
	  wait $$typing; typed=$$?; sed 's/^/mypy: /' $(VENV)/mypy.out; \
	  test $$tests -eq 0 && test $$typed -eq 0

test-quick: test-bytecode  ## The fast inner loop: in-memory and folder stores, no Redis, no slow tests
	MEMWORK_TEST_QUICK=1 $(BIN)/python -m pytest -n $(JOBS) --dist worksteal -m "not slow"

define style_and_imports
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(layout)
	@# lint-imports puts its working directory first on sys.path.
	cd $(LAYOUT) && $(CURDIR)/$(BIN)/lint-imports --config $(CURDIR)/pyproject.toml
endef
# pyproject's `files` names .venv/layout; the view of this venv is passed explicitly.
MYPY := $(BIN)/mypy $(LAYOUT)/memwork

lint: $(STAMP)  ## ruff check + format check + import contracts (lint-imports) + mypy (core/, tui/)
	$(style_and_imports)
	$(MYPY)

format: $(STAMP)  ## Apply ruff format and fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

generate: $(STAMP)  ## Remake Memory's methods and docs/CLI.md's table of operations from core/ops/operations.py, and the rule set's index
	$(BIN)/python -m memwork.core.ops.codegen
	$(BIN)/python scripts/gitleaks/make_index.py

bench: $(STAMP)  ## Run the benchmarks (prints the tables of docs/PERFORMANCE.md that it reproduces)
	$(BIN)/python bench/run.py

demo: $(STAMP)  ## Regenerate data/demo from the seeded generator
	$(BIN)/python data/generate_demo.py

clean:  ## Remove the virtualenv and caches
	rm -rf .venv .venv-python3* .pytest_cache .ruff_cache .mypy_cache
