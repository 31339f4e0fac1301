#!/usr/bin/env bash
# Source this first in every device command: installs kopt (and libcst, carried as a wheel in .whl/) into
# /tmp/kopt-site so kopt.ingest, kopt.index and kopt.corpora resolve as they do for a user, then leaves the
# shell outside the checkout (a checkout's kopt/ on sys.path would shadow the install).
#   usage (from the repo root, carry [".whl"]):  source evals/device/install.sh && <commands>
# Make the wheel here first: python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#   --implementation cp --platform manylinux_2_28_x86_64 -d .whl libcst==1.9.0
KOPT_ROOT=$(pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/kopt-site .whl/libcst-*.whl \
  && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/kopt-site . \
  || { echo "installing kopt into /tmp/kopt-site failed"; return 1; }
export KOPT_ROOT KOPT_SITE=/tmp/kopt-site PYTHONPATH=/tmp/kopt-site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export PATH=$PATH:/usr/local/cuda/bin
cd /tmp && python3 -c "import kopt.index, kopt.corpora, libcst; from kopt.patterns import load_patterns; \
print('kopt installed:', len(load_patterns()), 'patterns')"
