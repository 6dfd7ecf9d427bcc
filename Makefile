# rollmux: the two set-up commands of the README.
#   make reproduce   create .venv if missing, install rollmux, run the quick pipeline, then
#                    build the HTML report (figures/report.html)
#   make test        create .venv if missing, install rollmux[test,cluster], run ruff, mypy
#                    and pytest on every core (pytest-xdist; TEST_WORKERS=0 for one process)
# Paper scale: make reproduce CONFIG=config/paper.yaml
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
CONFIG ?= config/config.yaml
# pytest-xdist workers for make test ("auto": one per core). Whole files go to a worker
# (module fixtures such as the pipeline run of tests/test_workflow.py are built once), in
# the order tests/conftest.py sorts them: files with slow or subprocess tests first.
TEST_WORKERS ?= auto

.PHONY: reproduce test lint bench clean help

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,cluster]"
	touch $@ $(VENV)/.installed

# Interrupted (Ctrl-C, a kill, a crash)? Run the same command again: the lock of a killed
# run is released (scripts/unlock_stale.py, only when no Snakemake runs here) and the jobs
# it left incomplete run again (--rerun-incomplete); outputs are written atomically, so
# the resumed run ends with the bytes of an uninterrupted one (tests/test_workflow.py).
RESUME := --rerun-incomplete

# The pipeline too caches bytecode where PYTHONDONTWRITEBYTECODE is set: each of its ~350
# jobs is a fresh Python process, which otherwise compiles every rollmux module it imports
# again (about 0.2 s of CPU per replay, benchmarks/RESULTS-startup.md).
# Snakemake's scheduler wakes up once per second per job ever finished (each pass of its
# loop re-arms a timer of --max-jobs-per-timespan's span; a job's end adds a chain that never
# dies) and each pass re-reads every ready job's params, resources and input sizes: in the
# paper profile that took half a core by the 350th of 903 jobs (900 s of CPU in 50 min,
# benchmarks/RESULTS.md, issue 24 fourth pass). A 5 s span makes those passes 5x rarer; the
# jobs run locally, so no submission rate needs limiting, and a job's end still wakes the
# scheduler at once. The timers left at the end are cancelled (the Snakefile's onsuccess and
# onerror), so the run does not wait out the span before it exits.
SCHEDULE := --max-jobs-per-timespan 100000/5s

reproduce: export PYTHONDONTWRITEBYTECODE :=
reproduce: $(VENV)/.installed  ## run the pipeline (CONFIG=config/paper.yaml for paper scale), then the HTML report
	$(BIN)/python scripts/unlock_stale.py --configfile $(CONFIG)
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) $(RESUME) $(SCHEDULE)
	$(BIN)/snakemake --configfile $(CONFIG) --report figures/report.html \
		--report-stylesheet workflow/report/report.css

# Python caches bytecode (__pycache__, git-ignored) during the tests even where
# PYTHONDONTWRITEBYTECODE is set: otherwise every xdist worker and every subprocess of the
# tests (Snakemake and its jobs, the CLI, the scripts) compiles rollmux again and pytest
# rewrites every test module again in each worker (collection: 7.8-9.3 s of CPU per pytest
# process without the caches, 4.1-4.2 s with them).
test: export PYTHONDONTWRITEBYTECODE :=
test: $(VENV)/.installed-test  ## ruff + mypy + pytest on every core (Hypothesis included)
	$(BIN)/ruff check .
	$(BIN)/mypy src
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: $(VENV)/.installed-test  ## run the benchmarks (results printed, record in benchmarks/RESULTS.md)
	$(BIN)/python benchmarks/bench_meta_iteration.py

clean:  ## remove generated results and figures
	rm -rf results figures .snakemake
