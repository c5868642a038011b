# dg's developer entry points. Every target runs the tools of .venv by path, so
# nothing needs activating; `.venv` is created (or refreshed after pyproject.toml
# changes) on demand.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: .venv test lint typecheck lit pytest demo bench fuzz docs clean distclean

.venv: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-installs when pyproject.toml is newer than the last install.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev,examples]'
	touch $@

test: lint typecheck lit pytest

lint: .venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

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

# The benchmark table of issue 5 section 5 (a few minutes; timings, not tests).
bench: .venv
	$(BIN)/python bench/bench.py

docs: .venv
	$(BIN)/python -m dg.tools.gen_docs
	$(BIN)/python -m dg.tools.gen_supported_ops

clean:
	rm -rf out build .pytest_cache .mypy_cache .ruff_cache .hypothesis .lit_test_times.txt
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name Output \) -type d \
		-exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
