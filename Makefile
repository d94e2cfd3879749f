# Two commands for users: `make lab` and `make test`. Both create .venv when it is
# missing and reinstall only when pyproject.toml changed, so a second run is quick.
SHELL := /bin/bash
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test check lint format bench clean notebooks

# Set-up says what it is doing: a first install takes a few minutes.
$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 or later is needed" >&2; exit 1; }
	@test -x $(BIN)/python || { echo "==> creating the environment in $(VENV) with $(PYTHON)"; \
		$(PYTHON) -m venv $(VENV); }
	@echo "==> updating pip"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "==> installing workbench and its test and notebook dependencies (a few minutes the first time)"
	@$(BIN)/python -m pip install --progress-bar off -e '.[test]' \
		| grep -E '^(Collecting|Installing collected|Successfully installed)' || true
	@$(BIN)/python -c 'import workbench, cloudflare, altair' \
		|| { echo "installation failed: see the pip output above" >&2; exit 1; }
	@echo "==> environment ready"
	@touch $(STAMP)

# `workbench lab` starts the environment's JupyterLab with the workbench's server options
# (uploads up to 200 MB) and --allow-root where it runs as root (containers, CI machines).
lab: $(STAMP)
	@echo "==> starting JupyterLab on notebooks/00-start-here.ipynb (Ctrl-C to stop)"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m workbench lab

test: $(STAMP)
	@echo "==> running the test suite, notebooks included"
	$(BIN)/python -m pytest --nbval --nbval-current-env tests notebooks

# The quick loop for contributors (under 5 minutes on 2 cores): lint, then the tests that
# are neither slow (tests/slow.txt, tools/slow_tests.py) nor browser tests. `make test` is
# the full suite, notebooks included, that CI runs.
check: lint
	@echo "==> running the quick tests (make test runs them all, notebooks included)"
	$(BIN)/python -m pytest -q -m "not slow and not browser" tests

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

# Rebuild every notebook from its builder in notebooks/build/ (sources and fixed cell ids),
# then re-execute it in place so the outputs nbval compares are fresh. Run it after editing a
# builder; tests/test_notebooks_sync.py fails until you do. Timings are not recorded, so only
# sources and outputs change.
NBEXEC := $(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.record_timing=False

notebooks: $(STAMP)
	$(BIN)/python notebooks/build/build_start_here.py && $(NBEXEC) notebooks/00-start-here.ipynb
	$(BIN)/python notebooks/build/build_01_rules.py && $(NBEXEC) notebooks/01-rules-and-filters.ipynb
	$(BIN)/python notebooks/build/build_02_migration.py && $(NBEXEC) notebooks/02-migration-walkthrough.ipynb
	$(BIN)/python notebooks/build/build_03_storage.py && $(NBEXEC) notebooks/03-durable-object-storage.ipynb
	$(BIN)/python notebooks/build/build_04_events.py && $(NBEXEC) notebooks/04-security-events-with-duckdb.ipynb
	$(BIN)/python notebooks/build/build_05_tuning.py && $(NBEXEC) notebooks/05-tuning-false-positives.ipynb
	$(BIN)/python notebooks/build/build_06_engines.py && $(NBEXEC) notebooks/06-replay-on-other-engines.ipynb

clean:
	rm -rf $(VENV) build *.egg-info
