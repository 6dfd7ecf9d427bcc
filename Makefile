# rollmux: the two set-up commands of the README.
#   make reproduce   create .venv if missing, install rollmux, run the quick pipeline
#   make test        create .venv if missing, install rollmux[test], run ruff and pytest
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
CONFIG ?= config/config.yaml

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
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed

reproduce: $(VENV)/.installed  ## run the quick pipeline on the default trace
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

test: $(VENV)/.installed-test  ## ruff + pytest (Hypothesis included)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-test  ## run the benchmarks (results printed, record in benchmarks/RESULTS.md)
	$(BIN)/python benchmarks/bench_meta_iteration.py

clean:  ## remove generated results and figures
	rm -rf results figures .snakemake
