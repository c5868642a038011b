# dg's developer entry points. Every target runs the tools of .venv by path, so
# nothing needs activating; `.venv` is created (or refreshed after pyproject.toml
# changes) on demand.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: .venv test lint imports typecheck lit pytest demo bench fuzz docs clean distclean

.venv: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-installs when pyproject.toml is newer than the last install.
# Then fills dg's cache of torchao's patterns, so no user's first freeze exports them.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev,examples]'
	$(BIN)/dg-cache warm
	touch $@

test: lint typecheck lit pytest

lint: .venv imports
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The layering contracts of pyproject.toml ([tool.importlinter]). lint-imports' import graph
# (grimp) finds a package's modules by walking the package's one folder, but dg's subpackages
# live beside dg/ (package-dir in pyproject.toml). So it reads a view of dg laid out as
# installed: links to dg/'s own entries and to each mapped subpackage's folder. It runs in
# the view's folder because lint-imports puts its working directory first on sys.path.
IMPORT_VIEW := out/import-view
imports: .venv
	rm -rf $(IMPORT_VIEW)
	mkdir -p $(IMPORT_VIEW)/dg
	ln -s $(CURDIR)/dg/* $(IMPORT_VIEW)/dg/
	$(BIN)/python -c 'import os, sys, tomllib; \
	dirs = tomllib.load(open("pyproject.toml", "rb"))["tool"]["setuptools"]["package-dir"]; \
	[os.symlink(os.path.abspath(d), os.path.join(sys.argv[1], *p.split("."))) \
	 for p, d in dirs.items() if p != "dg"]' $(IMPORT_VIEW)
	cd $(IMPORT_VIEW) && $(CURDIR)/$(BIN)/lint-imports --no-logo --config $(CURDIR)/pyproject.toml \
		--cache-dir $(CURDIR)/out/import-linter-cache

typecheck: .venv
	$(BIN)/mypy

lit: .venv
	$(BIN)/lit -sv test

# pytest exits 5 when it collects no tests; make treats that as the failure it is.
# PYTEST_WORKERS processes (pytest-xdist) share the tests: 2 halves the wall time on the
# 2-core CI machine; PYTEST_WORKERS=0 runs them in this process (e.g. for pdb).
PYTEST_WORKERS ?= 2
pytest: .venv
	$(BIN)/pytest -n $(PYTEST_WORKERS)

# Many more random graphs and dg-opt mutants than `make test` runs; prints the counts by
# outcome and writes each failing case to out/fuzz-failures.txt. E.g. FUZZ_ARGS="--graphs 200".
fuzz: .venv
	$(BIN)/python test/fuzz/run_fuzz.py $(FUZZ_ARGS)

demo: .venv
	$(BIN)/python examples/digits_cnn.py
	$(BIN)/python examples/digits_decoder.py

# The benchmark tables (timings, not tests): bench/bench.py (issue 5: ResNet-18 64x64, the
# digits demos, export, dg-opt, memory, scaling; its device rows again at 2 threads, in wall
# time: CPU time would count the threads' waiting), then
# every other table script present: bench/zoo.py (the model zoo at full size, VGG-16's
# save/load/first run) and bench/freeze.py (the first freeze, when it exists). Each takes
# BENCH_ARGS; `make bench BENCH_ARGS=--quick` picks a subset. Measured whole: 5 min 5 s on an
# idle 2-core AVX512-VNNI machine (int8 GEMMs), 13 min 55 s on a 2-core machine without VNNI
# shared with other work (load ~4; the zoo ~9 min of it, freeze.py ~4).
BENCH_TABLES := $(wildcard bench/zoo.py bench/freeze.py)
bench: .venv
	$(BIN)/python bench/bench.py --also-threads 2 $(BENCH_ARGS)
	@set -e; for script in $(BENCH_TABLES); do \
		echo "== $$script"; $(BIN)/python $$script $(BENCH_ARGS); done

docs: .venv
	$(BIN)/python -m dg.tools.gen_docs
	$(BIN)/python -m dg.tools.gen_supported_ops

clean:
	rm -rf out build .pytest_cache .mypy_cache .ruff_cache .hypothesis .lit_test_times.txt
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name Output \) -type d \
		-exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
