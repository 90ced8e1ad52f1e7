# Two commands do all the set-up: `make demo` and `make test`. Both build .venv from
# nothing (re-installing only when pyproject.toml changes) and then run.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_DIR ?= datasets/demo-coding

.PHONY: venv test test-deps demo lab bench mutate lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP) test-deps
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Debian's chromium for the report browser test (tests/report): installed only when it is
# missing and we are root (CI containers); elsewhere nothing happens and that one test
# skips, saying why. A failed install is not a failed build.
test-deps:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "test-deps: installing chromium (apt-get) for the report browser test"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "test-deps: could not install chromium; the browser test will skip"; \
	fi

demo: $(STAMP)
	$(VENV)/bin/workbench demo

# JupyterLab on notebooks/ (start with getting-started.ipynb); as root (containers) it
# needs --allow-root; LAB_ARGS adds more (e.g. LAB_ARGS="--no-browser --ip=0.0.0.0")
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

# mutation testing of the seed-rule modules (not in CI: minutes); benchmarks/mutation.md
mutate: $(STAMP)
	$(VENV)/bin/pip install --quiet -e '.[dev,mutate]'
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2
	$(PY) benchmarks/mutation_report.py

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
