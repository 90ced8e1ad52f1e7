# Two commands do all the set-up: `make demo` and `make test`. Both build .venv from
# nothing (re-installing only when pyproject.toml changes) and then run.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_DIR ?= datasets/demo-coding

.PHONY: venv test demo lab bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

demo: $(STAMP)
	$(VENV)/bin/workbench demo

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
