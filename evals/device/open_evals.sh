#!/usr/bin/env bash
# One device call: `kopt eval diagnosis` with the GPU on open case sets (per-case rows kept), for the installed kopt
# and for pinned ones, to see what Nsight Compute evidence changes before a change is kept. Never a test half.
#
#   SETS="evals/diagnosis/manifest.yaml evals/diagnosis/blind-2026-12e/manifest.yaml:tune"   manifest[:split]
#   PINNED="62fcc9c"   kopts to run beside the installed one, carried as .camp/looks/kopt-<commit>.tar.gz
#
#   source evals/device/install.sh && SETS=... PINNED=... OUT=$OUT bash $KOPT_ROOT/evals/device/open_evals.sh
# carry [".whl", ".camp/looks"]. Writes $OUT/<kopt>-<set>.json; ncu takes turns through KOPT_GPU_LOCK.
set -u
source "$KOPT_ROOT/evals/device/pinned.sh"
for c in ${PINNED:-}; do
  pinned_kopt "$c" || echo "kopt $c: install failed"
done
for kopt in current ${PINNED:-}; do
  site=/tmp/kopt-site; [ "$kopt" = current ] || site=/tmp/kopt-look-$kopt:/tmp/kopt-site
  for s in ${SETS:?}; do
    manifest=${s%:*} split=""; [ "$s" != "$manifest" ] && split="--split ${s##*:}"
    name=$(basename "$(dirname "$manifest")")-$(basename "$manifest" .yaml)
    ( cd /tmp && PYTHONPATH=$site KOPT_HOME=/tmp/home-$kopt-$name KOPT_GPU_LOCK=/tmp/kopt-gpu0.lock \
        timeout "${EVAL_S:-500}" "${KOPT_CLI[@]}" \
        eval diagnosis --manifest "$KOPT_ROOT/$manifest" $split --workers "${WORKERS:-4}" --json \
        >"$OUT/$kopt-$name.json" 2>"$OUT/$kopt-$name.err"
      echo "$kopt $name: rc=$?" ) &
  done
done
wait
for f in "$OUT"/*.json; do
  eval_totals "$f" "${f##*/}" || echo "$f: no result"
done
