#!/usr/bin/env bash
# One device call for the blind diagnosis sets: time their pairs, then take one set's fixed looks on its test half.
#
#   TIME="evals/diagnosis/blind-2026-12c evals/diagnosis/blind-2026-12d"   sets whose pairs to time (side by side;
#       blind_timing.py --mark writes h200_speedup / excluded into the device copy's manifests; bring
#       $OUT/<set>-timing.json back and mark the manifests here with `blind_timing.py --mark-from`)
#   LOOKS="evals/diagnosis/blind-2026-12c@4257481 evals/diagnosis/blind-2026-12c@098f7c8"   looks to take: a set and
#       the pinned kopt of each, carried as .camp/looks/kopt-<commit>.tar.gz (`git archive --format=tar.gz -o ... <commit> pyproject.toml
#       README.md kopt index ingest corpora`); each look is `kopt eval diagnosis --split test` (totals only: the
#       eval keeps no per-case row of a test half) with and without ncu, in its own KOPT_HOME, the looks side by side
#       (ncu takes turns through KOPT_GPU_LOCK)
#
#   source evals/device/install.sh && TIME=... LOOKS=... OUT=$OUT bash $KOPT_ROOT/evals/device/blind_looks.sh
# carry [".whl", ".camp/looks"]. About 2-3 min for 85 pairs, then ~4-5 min for two looks of ~23 cases.
set -u
source "$KOPT_ROOT/evals/device/pinned.sh"
pids=()
for set in ${TIME:-}; do
  name=$(basename "$set")
  python3 "$KOPT_ROOT/evals/device/blind_timing.py" --manifest "$KOPT_ROOT/$set/manifest.yaml" --mark \
    --out "$OUT/$name-timing.json" --workers "${TIMING_WORKERS:-4}" >"$OUT/$name-timing.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for set in ${TIME:-}; do  # the count only: a per-pair line names a case before its set is split and looked at
  echo "$(basename "$set"): $(grep -E '^[0-9]+ of [0-9]+ kept' "$OUT/$(basename "$set")-timing.log" | tail -1)"
done

for look in ${LOOKS:-}; do
  set=${look%@*} c=${look#*@} name=$(basename "${look%@*}")
  (
    pinned_kopt "$c" || { echo "look $name@$c: install failed"; exit 1; }
    cd /tmp && PYTHONPATH=/tmp/kopt-look-$c:/tmp/kopt-site KOPT_HOME=/tmp/home-$c KOPT_GPU_LOCK=/tmp/kopt-gpu0.lock \
      timeout "${LOOK_S:-400}" "${KOPT_CLI[@]}" \
      eval diagnosis --manifest "$KOPT_ROOT/$set/manifest.yaml" --split test --workers "${WORKERS:-6}" --json \
      >"$OUT/$name-look-$c.json" 2>"$OUT/$name-look-$c.err"
    echo "look $name@$c: rc=$?"
  ) &
done
wait
for look in ${LOOKS:-}; do
  c=${look#*@} name=$(basename "${look%@*}")
  eval_totals "$OUT/$name-look-$c.json" "$name@$c" || echo "look $name@$c: no result (see $name-look-$c.err)"
done
