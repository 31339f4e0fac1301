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
for c in ${PINNED:-}; do
  d=/tmp/kopt-look-$c
  mkdir -p "$d/src" && tar xzf "$KOPT_ROOT/.camp/looks/kopt-$c.tar.gz" -C "$d/src" \
    && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target "$d" "$d/src" >/dev/null \
    || echo "kopt $c: install failed"
done
for kopt in current ${PINNED:-}; do
  site=/tmp/kopt-site; [ "$kopt" = current ] || site=/tmp/kopt-look-$kopt:/tmp/kopt-site
  for s in ${SETS:?}; do
    manifest=${s%:*} split=""; [ "$s" != "$manifest" ] && split="--split ${s##*:}"
    name=$(basename "$(dirname "$manifest")")-$(basename "$manifest" .yaml)
    ( cd /tmp && PYTHONPATH=$site KOPT_HOME=/tmp/home-$kopt-$name KOPT_GPU_LOCK=/tmp/kopt-gpu0.lock \
        timeout "${EVAL_S:-500}" python3 -c "import sys; from kopt.cli import main; sys.argv[0] = 'kopt'; main()" \
        eval diagnosis --manifest "$KOPT_ROOT/$manifest" $split --workers "${WORKERS:-4}" --json \
        >"$OUT/$kopt-$name.json" 2>"$OUT/$kopt-$name.err"
      echo "$kopt $name: rc=$?" ) &
  done
done
wait
for f in "$OUT"/*.json; do
  python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[1].rsplit('/', 1)[1], \
json.dumps({k: v['all'] for k, v in r['summary'].items()}))" "$f" 2>/dev/null || echo "$f: no result"
done
