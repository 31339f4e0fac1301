#!/usr/bin/env bash
# The LLM campaign (issue 23): one call advances every job of every arm by one round, within a time budget.
#
# Each arm is `kopt eval suite --proposer llm --grounding ARM` in one campaign (CAMPAIGN) over the same operators;
# the arms run side by side on one GPU (WORKERS jobs each; their timed sections take turns through KOPT_GPU_LOCK).
# A job resumes its run, uses the reply waiting in the prompt exchange (validate, time, commit the round), diagnoses
# the new best and writes the next request, then stops `waiting`. A job cut off at the budget stays resumable.
#
# On the GPU machine, from the repository root, carrying .whl (evals/device/README.md, "LLM campaign"):
#   source evals/device/install.sh && CAMPAIGN_DIR=evals/llm/campaign-2026-12-01 OUT=$OUT \
#     bash $KOPT_ROOT/evals/device/llm_campaign.sh
# Here, after the call: python3 evals/device/llm_campaign.py unpack FILES_AT/campaign.tar.gz CAMPAIGN_DIR
# CAMPAIGN_DIR holds store.tar.gz (the rounds store) and exchange/ (requests and replies); a first call needs neither.
# Knobs (environment): OPS (comma list; default the first column of evals/llm/ops.txt), ARMS (grounding values,
# default "full none", or CAMPAIGN/GROUNDING for arms that are campaigns of their own, e.g. "heldout-synth/full
# heldout-curated/full"), HOMES_DIR (each arm's KOPT_HOME is HOMES_DIR/<its campaign>: what sets the arms apart is
# then their KOPT_HOME, e.g. its synthesized patterns; default one KOPT_HOME for all), CAMPAIGN (the campaign's name
# in the store for plain grounding arms, default llm), ROUNDS (per operator, default 8), BUDGET_S
# (the whole call, default 480), RESERVE_S (of it, kept for the report and the tarball, default 60), WORKERS (jobs at
# once per arm, default 12: 24 on 16 cores), GPUS (default 1; 0 runs on the CPU through the interpreter, rounds untimed),
# WS (the workspace, default /tmp/kopt-llm: runs record task paths under it, so keep it fixed across calls), SUITE
# (the folder of task files, default evals/suite; its files and sibling packages are copied to WS/suite).
# Writes under $OUT: campaign.tar.gz (store.tar.gz + new or changed exchange files), report.md and report.json
# (kopt eval report --compare of the first two arms), log.txt. The summary is last.
set -uo pipefail
START=$(date +%s)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:?set OUT to the results folder}
CAMPAIGN_DIR=${CAMPAIGN_DIR:?set CAMPAIGN_DIR to the campaign folder, e.g. evals/llm/campaign-2026-12-01}
[ "${CAMPAIGN_DIR:0:1}" = / ] || CAMPAIGN_DIR=$ROOT/$CAMPAIGN_DIR
OPS=${OPS:-$(grep -v '^#' "$ROOT/evals/llm/ops.txt" | cut -f1 | paste -sd, -)}
SUITE=${SUITE:-$ROOT/evals/suite}  # the task folder, e.g. evals/realkernels/.cache/tasks (operators no prompt was tuned on)
ARMS=${ARMS:-"full none"}
CAMPAIGN=${CAMPAIGN:-llm}
ROUNDS=${ROUNDS:-8}
BUDGET_S=${BUDGET_S:-480}
RESERVE_S=${RESERVE_S:-60}
WORKERS=${WORKERS:-12}
GPUS=${GPUS:-1}
WS=${WS:-/tmp/kopt-llm}
POLICY=${POLICY:-progressive}  # static: diagnosis without ncu (the profiler's turns on the GPU cost the most)
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
# KOPT_SITE: kopt installed by evals/device/install.sh (kopt.index resolves); else the checkout
export HF_HUB_OFFLINE=1 KOPT_HOME=${KOPT_HOME_DIR:-$WS/home} PYTHONPATH="${KOPT_SITE:-$ROOT}${PYTHONPATH:+:$PYTHONPATH}"
helper() { python3 "$ROOT/evals/device/llm_campaign.py" "$@"; }

# a fresh workspace: the suite at a fixed path (a resumed run checks its task file), the carried store and exchange
rm -rf "$WS" && mkdir -p "$WS" && cp -r "$SUITE" "$WS/suite" || exit 1
helper restore "$CAMPAIGN_DIR" "$WS" || { echo "restoring $CAMPAIGN_DIR failed"; exit 1; }
helper state "$WS" > "$WS/before.json"
SPECS=()  # CAMPAIGN/GROUNDING of each arm
for arm in $ARMS; do [[ $arm == */* ]] && SPECS+=("$arm") || SPECS+=("$CAMPAIGN/$arm"); done
LEFT=$(( BUDGET_S - RESERVE_S - $(date +%s) + START ))
[ "$LEFT" -ge 30 ] || LEFT=30  # `timeout 0` would mean no limit at all
echo "llm campaign: arms ${SPECS[*]}, $(echo "$OPS" | tr ',' '\n' | wc -l) ops, rounds $ROUNDS, $WORKERS workers" \
     "per arm on $GPUS GPU(s), ${LEFT}s for the jobs; workspace $WS"

pids=()  # wait for these only: a bare `wait` would also wait for the log's tee
for spec in "${SPECS[@]}"; do
  camp=${spec%%/*} arm=${spec#*/}
  home=$KOPT_HOME; [ -n "${HOMES_DIR:-}" ] && home=$HOMES_DIR/$camp && mkdir -p "$home"
  # timeout signals its whole process group: the arm's job children stop with it (their runs stay resumable)
  (cd "$WS" && KOPT_HOME=$home timeout -k 10 "$LEFT" python3 -m kopt.cli eval suite --suite "$WS/suite" --ops "$OPS" \
     --proposer llm --llm-exchange "$WS/exchange" --grounding "$arm" --campaign "$camp" --rounds "$ROUNDS" --policy "$POLICY" \
     --gpus "$GPUS" --workers-per-gpu "$WORKERS" --job-timeout "$LEFT" --json > "$WS/jobs-$camp-$arm.json" \
   || echo "   arm $spec: kopt eval suite exited $? (124: stopped at the budget; its runs stay resumable)") &
  pids+=($!)
done
wait "${pids[@]}"

echo "== report"
ARMLIST="${SPECS[*]}"
if [ ${#SPECS[@]} -ge 2 ]; then PICK=(--compare "${SPECS[0]}" "${SPECS[1]}"); else PICK=(--arm "${SPECS[0]}"); fi
(cd "$WS" && python3 -m kopt.cli eval report --store "$WS/.kopt" "${PICK[@]}" \
   --title "LLM campaign $(basename "$CAMPAIGN_DIR"): ${ARMLIST// / vs }" > "$OUT/report.md" \
 && python3 -m kopt.cli eval report --store "$WS/.kopt" "${PICK[@]}" --json > "$OUT/report.json") \
 || echo "   the report failed (see above); the store comes back all the same"
echo "== pack"
[ -f "$WS/.kopt/rounds.sqlite" ] && helper pack "$WS" "$OUT/campaign.tar.gz" || echo "   no rounds store to bring back"
echo "== summary"
helper summary "$WS" "${ARMLIST// /,}" "$WS/before.json"
echo "call: $(( $(date +%s) - START )) s of ${BUDGET_S} s"
