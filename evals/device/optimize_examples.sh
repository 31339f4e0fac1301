#!/usr/bin/env bash
# `kopt optimize` on each example with the deterministic recipes, then `kopt runs report` (issue 6).
#
# Run from the repository root on the GPU machine (Python 3.12, torch, triton 3.6, ncu on PATH):
#   OUT=/tmp/out bash evals/device/optimize_examples.sh                       # all four, ~12-15 min
#   OUT=/tmp/out EXAMPLES="vector_add softmax" bash evals/device/optimize_examples.sh    # ~6 min
#   OUT=/tmp/out EXAMPLES="strided_scale matmul" bash evals/device/optimize_examples.sh  # ~7 min
# Knobs: EXAMPLES (default: vector_add strided_scale softmax matmul), ROUNDS (default 3), MINUTES (per example,
# default 2.5; a round that has started finishes), PROPOSER (default recipes).
# Writes under $OUT: <example>.json (the run summary), <example>.md and <example>.html (kopt runs report),
# <example>_kopt.py (the best kernel, when one won), optimize.md (the table for evals/RESULTS.md), log.txt,
# store.tar.gz (the workspace's .kopt: re-report locally with `kopt runs report`). The summary is printed last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:?set OUT to the results folder}
EXAMPLES=${EXAMPLES:-"vector_add strided_scale softmax matmul"}
ROUNDS=${ROUNDS:-3}
MINUTES=${MINUTES:-2.5}
PROPOSER=${PROPOSER:-recipes}
WS=/tmp/kopt-optimize
mkdir -p "$OUT" "$WS"
# KOPT_SITE: an installed kopt (pip install --target), so kopt.ingest/kopt.index resolve; else the checkout.
export HF_HUB_OFFLINE=1 KOPT_HOME=$WS/home PYTHONPATH="${KOPT_SITE:-$ROOT}${PYTHONPATH:+:$PYTHONPATH}"
exec > >(tee -a "$OUT/log.txt") 2>&1

cd "$ROOT"
python3 -c "import kopt.cli, libcst, rich" 2>/dev/null || pip install -q libcst rich click 2>/dev/null
python3 -c "import kopt.cli, libcst" 2>/dev/null || pip install --no-deps --no-build-isolation -q -e . \
  || { echo "kopt is not importable and could not be installed (pip install -e .)"; exit 1; }
kopt() { (cd "$WS" && python3 -m kopt.cli "$@"); }

for ex in $EXAMPLES; do
  cp "$ROOT/examples/$ex.py" "$WS/$ex.py"
  echo "== $ex: kopt optimize --proposer $PROPOSER --rounds $ROUNDS --minutes $MINUTES"
  start=$(date +%s)
  timeout "$(python3 -c "print(int($MINUTES * 60 + 300))")" \
    bash -c "cd '$WS' && python3 -m kopt.cli optimize '$ex.py' --proposer $PROPOSER --rounds $ROUNDS \
      --minutes $MINUTES --json" > "$OUT/$ex.json" || echo "   $ex: optimize failed or timed out (see log)"
  echo "   $ex took $(( $(date +%s) - start )) s"
  run=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$OUT/$ex.json" 2>/dev/null)
  if [ -n "$run" ]; then
    kopt runs report "$run" --html "$OUT/$ex.html" > "$OUT/$ex.md"
    [ -f "$WS/${ex}_kopt.py" ] && cp "$WS/${ex}_kopt.py" "$OUT/"
  fi
done
tar -czf "$OUT/store.tar.gz" -C "$WS" .kopt 2>/dev/null

python3 - "$OUT" $EXAMPLES <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = ["| example | rounds | outcomes | best | speedup vs initial | deepest level | stop |", "|---|---|---|---|---|---|---|"]
for ex in sys.argv[2:]:
    try:
        s = json.loads((out / f"{ex}.json").read_text())
    except (OSError, ValueError):
        rows.append(f"| {ex} | - | - | - | - | - | failed (see log.txt) |")
        continue
    rounds = s["rounds"]
    outcomes = ", ".join(f"{r['n']}:{r['proposer'].split(':')[-1]}={r['outcome']}" for r in rounds)
    deepest = max((r["level_reached"] or "-" for r in rounds), default="-")
    best = f"round {s['best_round']}" if s["best_round"] else "-"
    speed = f"x{s['speedup']:.2f}" if s["speedup"] else "-"
    rows.append(f"| {ex} | {len(rounds)} | {outcomes} | {best} | {speed} | {deepest} | {s['stop_reason'][:90]} |")
table = "\n".join(rows)
(out / "optimize.md").write_text(table + "\n")
print("\nkopt optimize on the examples (recipes):")
print(table)
PY
