#!/usr/bin/env bash
# Here (the CPU VM), once before the held-out calls of issue 23's synthesis payoff (evals/llm/heldout-2026-12-02/):
# builds .camp/heldout/, the one folder those device calls carry (git-ignored through .git/info/exclude's /.camp/):
#   kopt/            the pinned tree the device installs and runs (kopt at PIN: nothing moves under the experiment),
#                    with .whl/ (libcst, and the index kit: qdrant-edge, sentence-transformers, the MiniLM as int8)
#   homes.tar.gz     the two arms' KOPT_HOMEs, each with the same index (pass notes, patterns, the installed Triton
#                    package, as the campaign's full arm had): heldout-curated (curated catalog only) and
#                    heldout-synth (plus `kopt synthesize --store <the campaign's rounds 1-4> --diagnose-parents`:
#                    its patterns/ and their points upserted into the index)
#   synthesis.json   that synthesis' --json output (what the with-arm got)
#   bubblewrap_*.deb the sandbox's bwrap, which the GPU image lacks
# Steps already done are kept (delete .camp/heldout to start over). About 15-30 min on the shared 2-core box, most of
# it the synthesis' diagnosis of each parent kernel. Knobs: PIN (commit, default HEAD), STORE (the campaign's
# store.tar.gz), PYTHON (a Python with kopt's dependencies, default .venv/bin/python).
set -euo pipefail
MAIN=$(cd "$(dirname "$0")/../.." && pwd)
PIN=$(git -C "$MAIN" rev-parse "${PIN:-HEAD}")
CAMP=$MAIN/.camp/heldout
STORE=${STORE:-$MAIN/evals/llm/campaign-2026-12-01/store.tar.gz}
PY=${PYTHON:-$MAIN/.venv/bin/python}
BUILD=/tmp/kopt-heldout-build  # the local site and the homes being built (never carried)
mkdir -p "$CAMP" "$BUILD"

if [ "$(cat "$CAMP/kopt/PIN" 2>/dev/null)" != "$PIN" ]; then
  [ -d "$MAIN/.whl/concurrency/minilm" ] || { echo "no .whl/concurrency kit: make it first (evals/device/concurrency.sh)"; exit 1; }
  rm -rf "$CAMP/kopt" "$CAMP/homes.tar.gz" "$CAMP/synthesis.json" "$BUILD"/* && mkdir -p "$CAMP/kopt/.whl"
  git -C "$MAIN" archive "$PIN" kopt index ingest corpora pyproject.toml README.md evals/suite evals/device \
    | tar x -C "$CAMP/kopt"
  rm -rf "$CAMP/kopt/evals/device/results"
  cp "$MAIN"/.whl/libcst-*.whl "$CAMP/kopt/.whl/" && cp -r "$MAIN/.whl/concurrency" "$CAMP/kopt/.whl/"
  echo "$PIN" > "$CAMP/kopt/PIN"
fi
echo "pinned tree: kopt $PIN"

# kopt at PIN for this machine's Python, as the device installs it (kopt.index, kopt.ingest, kopt.corpora)
SITE=$BUILD/site
if [ ! -d "$SITE/kopt" ]; then
  mkdir -p "$SITE" && cp -r "$CAMP/kopt/kopt" "$SITE/kopt"
  for d in index ingest corpora; do ln -s "$CAMP/kopt/$d" "$SITE/kopt/$d"; done
fi
kopt() { (cd "$BUILD" && PYTHONPATH=$SITE HF_HUB_OFFLINE=1 KOPT_SEARCH_WORKER=0 nice -n 10 "$PY" -m kopt.cli "$@"); }

if [ ! -f "$CAMP/homes.tar.gz" ]; then
  if [ ! -f "$BUILD/heldout-curated/index/catalog.json" ]; then
    rm -rf "$BUILD/heldout-curated"
    for corpus in passes patterns triton-pkg; do KOPT_HOME=$BUILD/heldout-curated kopt ingest "$corpus"; done
  fi
  rm -rf "$BUILD/heldout-synth" "$BUILD/store" && mkdir -p "$BUILD/store"
  cp -r "$BUILD/heldout-curated" "$BUILD/heldout-synth" && rm -rf "$BUILD/heldout-synth/index/readers"
  tar xzf "$STORE" -C "$BUILD/store"
  echo "synthesizing from $(basename "$(dirname "$STORE")") (rounds as in its store)"
  KOPT_HOME=$BUILD/heldout-synth kopt synthesize --store "$BUILD/store/.kopt" --diagnose-parents --json \
    > "$CAMP/synthesis.json.tmp" && mv "$CAMP/synthesis.json.tmp" "$CAMP/synthesis.json"
  # what travels: the indexes (not their readers' views) and the synthesized patterns, no caches
  tar czf "$CAMP/homes.tar.gz.tmp" -C "$BUILD" --exclude=readers --exclude=cache --exclude=sandbox-cache \
    heldout-curated heldout-synth && mv "$CAMP/homes.tar.gz.tmp" "$CAMP/homes.tar.gz"
fi
ls "$MAIN"/.camp/bubblewrap_*.deb > /dev/null 2>&1 && cp "$MAIN"/.camp/bubblewrap_*.deb "$CAMP/" \
  || ls "$CAMP"/bubblewrap_*.deb > /dev/null 2>&1 \
  || (cd "$CAMP" && apt-get download bubblewrap) || { echo "no bubblewrap .deb for the sandbox"; exit 1; }
"$PY" - "$CAMP/synthesis.json" <<'EOF'
import json, sys
actions = json.load(open(sys.argv[1])).get("actions", [])
made = sorted(a.get("pattern") or a.get("id") or "?" for a in actions if a.get("action") in ("create", "update"))
print(f"synthesis: {len(made)} patterns written for the with-arm:", ", ".join(made))
EOF
echo "carry [\".camp/heldout\"]: $(du -sh "$CAMP" | cut -f1) (+ the tree; a call carries 64 MiB in all)"
