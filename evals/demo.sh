#!/usr/bin/env bash
# The main job on the embedded defaults (`make demo`): each step is a command a user would type.
set -euo pipefail
KOPT=${1:-kopt}
echo "== compile an example kernel to its IR stages (sm_90, no GPU needed)"
$KOPT compile examples/vector_add.py --stage ptx | head -40
echo "== validate it (the Triton interpreter on CPU, or the GPU when there is one)"
$KOPT validate examples/vector_add.py
