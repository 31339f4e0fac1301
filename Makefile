# The whole set-up on a fresh machine is one of these two commands:
#   make demo   the main job on the embedded defaults
#   make test   the test suite
# Both create (or reuse) .venv and install what is missing. A CPU torch 2.13 goes in first
# when no torch is importable, so nothing pulls a multi-GB CUDA build.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
KOPT   := $(VENV)/bin/kopt
STAMP  := $(VENV)/.kopt-installed

.PHONY: demo test setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c 'import torch' 2>/dev/null || $(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test,ray]'   # ray: optional for users, tested here (campaign --ray)
	@touch $@

demo: $(STAMP)
	KOPT_DEMO=1 bash evals/demo.sh $(KOPT) $(PY)

test: $(STAMP)
	$(KOPT) toolchain add ascend
	$(PY) -m pytest -q -ra

clean:
	rm -rf $(VENV) .kopt
