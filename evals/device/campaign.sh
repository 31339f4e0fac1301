#!/usr/bin/env bash
# The suite campaign on the H200 (issue 7) and the synthesis experiment (issue 8), within a time budget.
#
# Run from the repository root on the GPU machine (Python 3.12, torch, triton 3.6, ncu on PATH):
#   OUT=/tmp/out BUDGET_MIN=25 bash evals/device/campaign.sh
# STORE_IN: a store.tar.gz from an earlier call, restored first, so a campaign split over calls resumes.
# Knobs (environment): BUDGET_MIN (total wall minutes, default 25), GPUS (default all), WORKERS (per GPU, default 4:
# CPU work overlaps, timing takes turns), ROUNDS (per operator, default 8), OP_MINUTES (per operator, default: the
# phase's share spread over the workers), OPS (comma list, default every evals/suite operator), POLICY_OPS (operators for the policy
# comparison, default 8 of them), PHASES (default "suite policies synth"), CONCURRENT=1 (run the phases, and the two
# policies, side by side, each with the whole budget: a call that resumes several unfinished phases keeps every GPU busy).
#
# Phases, each given a share of the budget (jobs past their share are abandoned and stay resumable):
#   suite     every operator, recipes only, --policy progressive (campaign "suite")            50%
#   policies  POLICY_OPS under profile-only and always-deep (same campaign; progressive reused) 20%
#   synth     synthesize from the first half's rounds (campaign "suite"), then the second half twice, side by
#             side under the same load: with the synthesized patterns (campaign "$EXPERIMENT-with")
#             and with the curated catalog only ("$EXPERIMENT-without"); EXPERIMENT defaults to
#             "synth" (name a new one to repeat the experiment on a store that has run it)       25%
# Writes under $OUT: suite.md and synth.md (sections for evals/RESULTS.md), plots/*.svg, suite.json,
# synth-with.json, synthesize.json, patterns/ (what synthesis wrote), store.tar.gz (the rounds store, refreshed every
# minute while jobs run: merge or re-report locally with `kopt eval report --store DIR`), log.txt. The summary is last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:?set OUT to the results folder}
BUDGET_MIN=${BUDGET_MIN:-25}
GPUS=${GPUS:-all}
WORKERS=${WORKERS:-4}
ROUNDS=${ROUNDS:-8}
PHASES=${PHASES:-"suite policies synth"}
EXPERIMENT=${EXPERIMENT:-synth}
POLICY_OPS=${POLICY_OPS:-"gelu,softmax,layernorm,row_sum,matmul_fp16,matmul_fp32,transpose2d,embedding"}
WS=${WS:-/tmp/kopt-campaign}  # runs record task paths under it: keep it fixed across calls
mkdir -p "$OUT" "$WS"
# KOPT_SITE: an installed kopt (evals/device/install.sh), so kopt.ingest/kopt.index resolve; else the checkout.
export HF_HUB_OFFLINE=1 KOPT_HOME=$WS/home-without PYTHONPATH="${KOPT_SITE:-$ROOT}${PYTHONPATH:+:$PYTHONPATH}"
exec > >(tee -a "$OUT/log.txt") 2>&1

cd "$ROOT"
(cd "$WS" && python3 -c "import kopt.index, kopt.cli" 2>/dev/null) || pip install --no-deps --no-build-isolation -q -e . \
  || { echo "kopt is not importable and could not be installed (pip install -e .)"; exit 1; }
kopt() { (cd "$WS" && python3 -m kopt.cli "$@"); }

# the store records task paths: a fixed copy of the suite lets a later call on another machine resume its runs
rm -rf "$WS/suite" && cp -r "$ROOT/evals/suite" "$WS/suite"
[ -n "${STORE_IN:-}" ] && [ ! -d "$WS/.kopt" ] && tar xzf "$STORE_IN" -C "$WS" && echo "restored the rounds store from $STORE_IN"
snapshot() {  # a consistent copy of the rounds store as $OUT/store.tar.gz, replaced whole: a call cut off at its
  # device limit still brings back the last one (SNAPSHOT_S apart, default 60 s)
  local tmp="$WS/.snapshot"
  rm -rf "$tmp" && mkdir -p "$tmp/.kopt" || return 0
  python3 -c "import sqlite3, sys; src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2]); src.backup(dst)" \
    "$WS/.kopt/rounds.sqlite" "$tmp/.kopt/rounds.sqlite" 2>/dev/null || return 0
  cp -r "$WS/.kopt/artifacts" "$tmp/.kopt/" 2>/dev/null
  (cd "$tmp" && tar czf "$OUT/store.tmp.tar.gz" .kopt) && mv "$OUT/store.tmp.tar.gz" "$OUT/store.tar.gz"
}
(while sleep "${SNAPSHOT_S:-60}"; do snapshot; done) >/dev/null 2>&1 &  # off the log: a sleeping child must not hold it open
SNAPSHOTS=$!
ALL_OPS=${OPS:-$(ls "$WS"/suite/*.py | xargs -n1 basename | sed 's/\.py$//' | grep -v '^_' | paste -sd, -)}
N_OPS=$(echo "$ALL_OPS" | tr ',' '\n' | wc -l)
N_GPUS=$(python3 -c "import torch; print(torch.cuda.device_count())")
[ "$GPUS" != all ] && N_GPUS=$GPUS
HALF=$(( (N_OPS + 1) / 2 ))
FIRST=$(echo "$ALL_OPS" | tr ',' '\n' | head -n "$HALF" | paste -sd, -)
SECOND=$(echo "$ALL_OPS" | tr ',' '\n' | tail -n +"$((HALF + 1))" | paste -sd, -)
echo "campaign: $N_OPS ops on $N_GPUS GPU(s) x $WORKERS workers, ${BUDGET_MIN} min, rounds $ROUNDS; workspace $WS"

# per-operator minutes so that a phase of P minutes fits: P * workers / operators (at least 1)
per_op() { [ -n "${OP_MINUTES:-}" ] && { echo "$OP_MINUTES"; return; }
  python3 -c "print(max(1.0, round($1 * $N_GPUS * $WORKERS / max($2, 1), 1)))"; }
phase() {  # phase NAME SHARE_PERCENT OPS POLICY CAMPAIGN
  local share=$2; [ "${CONCURRENT:-0}" = 1 ] && share=100
  local minutes=$(python3 -c "print($BUDGET_MIN * $share / 100)") n=$(echo "$3" | tr ',' '\n' | wc -l)
  local m=$(per_op "$minutes" "$n")
  echo "== $1: $n ops x $4, ${m} min/op, phase ${minutes} min"
  timeout "$(python3 -c "print(int($minutes * 60 + 60))")" \
    bash -c "cd '$WS' && python3 -m kopt.cli eval suite --suite '$WS/suite' --ops '$3' --policy '$4' \
      --rounds $ROUNDS --minutes $m --gpus $GPUS --workers-per-gpu $WORKERS --campaign $5 --job-timeout $(python3 -c "print(int($m * 120 + 120))") \
      " || echo "   $1 stopped at its time share (resumable)"  # one line per finished job goes to log.txt
}

# run_phase NAME: one phase of the campaign (in the background too when CONCURRENT=1)
run_phase() {
  case $1 in
    suite) phase suite 50 "$ALL_OPS" progressive suite ;;
    profile-only|always-deep) phase policies 10 "$POLICY_OPS" "$1" suite ;;
    synth)
      RUNS=$(cd "$WS" && python3 - "$FIRST" <<'EOF'
import sys
from kopt.config import load_settings
from kopt.rounds.store import RoundsStore
first = set(sys.argv[1].split(","))
s = RoundsStore(load_settings().state_dir)
print(",".join(r.run_id for r in s.runs() if r.options.get("campaign") == "suite" and r.options.get("op") in first
               and r.options.get("policy", "progressive") == "progressive"))
EOF
)
      [ -z "$RUNS" ] && { echo "   no first-half runs to synthesize from"; return; }
      mkdir -p "$WS/home-with"
      cp -r "$WS/home-without/." "$WS/home-with/" 2>/dev/null
      KOPT_HOME=$WS/home-with kopt synthesize --runs "$RUNS" --json > "$OUT/synthesize.json" \
        || echo "   synthesize failed (see log)"
      cp -r "$WS/home-with/patterns" "$OUT/patterns" 2>/dev/null
      KOPT_HOME=$WS/home-with phase "$EXPERIMENT-with" 25 "$SECOND" progressive "$EXPERIMENT-with" & local with=$!
      phase "$EXPERIMENT-without" 25 "$SECOND" progressive "$EXPERIMENT-without"
      wait "$with" ;;
  esac
}
pids=()  # wait for these only: a bare `wait` would also wait for the log's tee, which never ends
for p in $(echo " $PHASES " | sed 's/ policies / profile-only always-deep /'); do
  if [ "${CONCURRENT:-0}" = 1 ]; then run_phase "$p" & pids+=($!); else run_phase "$p"; fi
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"

echo "== report"
rm -f "$OUT/suite.md" "$OUT/synth.md"
kopt eval report --campaign suite --plots "$OUT/plots" --title "Suite campaign on the H200 (recipes)" --append "$OUT/suite.md"
kopt eval report --campaign "$EXPERIMENT-with" --plots "$OUT/plots/synth" --title "Second half with synthesized patterns" \
  --append "$OUT/synth.md" 2>/dev/null
kopt eval report --campaign suite --json > "$OUT/suite.json"
(cd "$WS" && python3 - "$OUT" "$SECOND" "$EXPERIMENT") <<'EOF'
import json, sys
from kopt.commands.eval_report import accounting
from kopt.config import load_settings
from kopt.suite_report import summarize
out, second, experiment = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3]
state = load_settings().state_dir
rows = {}
for label in ("without", "with"):
    res = [r for r in accounting([state], f"{experiment}-{label}")["results"] if r.op in second and r.policy == "progressive"]
    s = summarize(res)
    rows[label] = {k: s[k] for k in ("operators", "timed", "geomean_speedup", "median_best_round", "best_at_l1",
                                     "improved", "median_rounds_to_90", "median_seconds_to_best", "rounds")}
json.dump(rows, open(f"{out}/synth-compare.json", "w"), indent=1, default=str)
lines = ["| second half | ops (timed) | geomean | median best round | best at L1 | median rounds to 90% | "
         "median s to best | rounds |", "|---|---|---|---|---|---|---|---|"]
for label, s in rows.items():
    g = f"{s['geomean_speedup']:.2f}x" if s["geomean_speedup"] else "-"
    lines.append(f"| {label} synthesized patterns | {s['operators']} ({s['timed']}) | {g} | {s['median_best_round']} | "
                 f"{s['best_at_l1']}/{s['improved']} | {s['median_rounds_to_90']} | {s['median_seconds_to_best']} | "
                 f"{s['rounds']} |")
open(f"{out}/synth.md", "a").write("\n### With vs without synthesized patterns\n\n" + "\n".join(lines) + "\n")
EOF
kill "$SNAPSHOTS" 2>/dev/null; wait "$SNAPSHOTS" 2>/dev/null
snapshot
echo "== summary"
sed -n '/| figure/,/^$/p' "$OUT/suite.md"
tail -4 "$OUT/synth.md"
