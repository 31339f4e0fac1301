# The whole set-up on a fresh machine is one of these two commands:
#   make demo   the main job on the embedded defaults
#   make test   the test suite (everything that runs on a CPU; GPU tests skip without one)
# Also: make test-fast   the unit tests only (no index builds, Triton compiles or toolchain download)
#       make eval-data TRITON_SRC=DIR [TRITON_ASCEND_SRC=DIR]   kopt's data (retrieval gold sets, pattern and
#                      pass-note citations) against the pinned compiler checkouts
# Both create (or reuse) .venv and install what is missing. A CPU torch 2.13 goes in first
# when no torch is importable, so nothing pulls a multi-GB CUDA build.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
KOPT   := $(VENV)/bin/kopt
STAMP  := $(VENV)/.kopt-installed

.PHONY: demo test test-fast lint eval-data setup clean bubblewrap chromium

setup: bubblewrap $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory bubblewrap
	@test -x $(PY) || { echo "== creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@$(PY) -c 'import torch' 2>/dev/null || { echo "== installing torch 2.13 (CPU build, ~200 MB): a few minutes, quiet while pip unpacks"; \
	  $(PY) -m pip install torch==2.13.0; }
	@echo "== installing kopt and its dependencies into $(VENV) (triton, sentence-transformers, qdrant, llama-index, ray): several minutes, quiet while pip unpacks"
	@$(PY) -m pip install -e '.[test,ray]'   # ray: optional for users, tested here (campaign --ray)
	@touch $@

# The sandbox for user code (kopt/harness/containment.py) uses bubblewrap when present: installed here when
# root with apt; otherwise skipped silently and kopt falls back to weaker containment.
bubblewrap:
	@command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
	  { apt-get install -y -q bubblewrap || { apt-get update -q && apt-get install -y -q bubblewrap; }; } \
	  >/dev/null 2>&1 || echo "note: bubblewrap could not be installed; kopt falls back to weaker containment"

# Headless chromium renders the HTML run report in tests/test_run_report.py (which skips without it): installed
# by `make test` when root with apt (not by `make demo`); anywhere else, or when apt fails, a note and nothing else.
chromium:
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
	  { echo "== installing chromium with apt (~100 MB, for the HTML report's screenshot test)"; \
	    { apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; } >/dev/null 2>&1 || \
	    echo "note: chromium could not be installed; the HTML report's screenshot test will skip"; }

demo: $(STAMP)
	@bash evals/demo.sh $(KOPT) $(PY)

# Both test targets run pytest in $(WORKERS) pytest-xdist processes (most tests wait on a child: a kopt CLI, a
# sandboxed worker). --dist loadgroup keeps each module of tests/conftest.py GROUPS on one worker (a costly module
# fixture built once, shared state); conftest's ALONE tests run with the other worker idle. WORKERS=0: serial.
WORKERS ?= 2
test: $(STAMP) chromium
	$(KOPT) toolchain add ascend
	$(PY) -m pytest -q -ra -n $(WORKERS) --dist loadgroup --durations=25

test-fast: $(STAMP)
	$(PY) -m pytest -q -ra -n $(WORKERS) --dist loadgroup -m "not slow and not eval_data"

# ruff (lint rules in pyproject.toml) over kopt/, index/, ingest/, corpora/ and tests/, mypy over the ground floor; tests/test_lint.py runs the same.
lint: $(STAMP)
	$(PY) -m ruff check kopt index ingest corpora tests
	$(PY) -m mypy

TRITON_SRC ?=
TRITON_ASCEND_SRC ?=
eval-data: $(STAMP)
	@test -n "$(wildcard $(TRITON_SRC))" || { echo "make eval-data: set TRITON_SRC to a Triton checkout at the commit pinned in evals/retrieval/gold.yaml"; exit 2; }
	TRITON_SRC="$(wildcard $(TRITON_SRC))" TRITON_ASCEND_SRC="$(wildcard $(TRITON_ASCEND_SRC))" $(PY) -m pytest -q -ra -m eval_data

clean:
	rm -rf $(VENV) .kopt
