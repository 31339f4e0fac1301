#!/usr/bin/env bash
# Here (the CPU VM), once before the held-out calls of issue 23's synthesis payoff (evals/llm/heldout-2026-12-02/):
# builds .camp/heldout/, the one folder those device calls carry (git-ignored through .git/info/exclude's /.camp/):
#   kopt/            the pinned tree the device installs and runs (kopt at PIN: nothing moves under the experiment),
#                    with .whl/ (libcst)
#   kit.tar.xz       the index kit the GPU image lacks: qdrant-edge and sentence-transformers (unpacked wheels) and
#                    the MiniLM with int8 weights (.whl/concurrency, made as evals/device/concurrency.sh says)
#   homes.tar.xz     the two arms' KOPT_HOMEs, each with the same index (pass notes, patterns, the installed Triton
#                    package, as the campaign's full arm had): heldout-curated (curated catalog only) and
#                    heldout-synth (plus the patterns of `kopt synthesize --store <the campaign's rounds 1-4>
#                    --no-index --diagnose-parents`, their points upserted into its index)
#   synthesis.json   that synthesis' --json output (taken, with its patterns, from the committed record
#                    evals/llm/heldout-2026-12-02/synthesis/ when it is there; else run here)
#   bubblewrap_*.deb the sandbox's bwrap, which the GPU image lacks
# Steps already done are kept; kopt is pinned at the first run (delete .camp/heldout to start over). About 15-60 min
# on the shared 2-core box: the synthesis' diagnosis of each parent kernel, the embedding. Knobs: PIN (commit; default
# the one .camp/heldout was built with, else HEAD), STORE (the campaign's
# store.tar.gz), PYTHON (a Python with kopt's dependencies, default .venv/bin/python), VECTORS (a KOPT_HOME's
# cache/vectors.sqlite to start the embedding cache from, e.g. ~/.kopt's: the ingest then embeds only what it lacks;
# ~1,200 chunks take 10-60 min to embed on the shared box).
set -euo pipefail
MAIN=$(cd "$(dirname "$0")/../.." && pwd)
CAMP=$MAIN/.camp/heldout
BUILD=/tmp/kopt-heldout-build  # the local site, the synthesis' scratch home and the homes being built (never carried)
BUILT=$(cat "$CAMP/kopt/PIN" 2>/dev/null || true)
PIN=$(git -C "$MAIN" rev-parse "${PIN:-${BUILT:-HEAD}}")
if [ -n "$BUILT" ] && [ "$BUILT" != "$PIN" ]; then  # every call of the experiment runs one kopt
  echo ".camp/heldout was built with kopt $BUILT, not $PIN: run without PIN to keep it, or delete .camp/heldout and"
  echo "$BUILD to start over (the index and the synthesis are rebuilt, 15-60 min)"; exit 1
fi
STORE=${STORE:-$MAIN/evals/llm/campaign-2026-12-01/store.tar.gz}
PY=${PYTHON:-$MAIN/.venv/bin/python}
mkdir -p "$CAMP" "$BUILD"

if [ -z "$BUILT" ]; then
  [ -d "$MAIN/.whl/concurrency/minilm" ] || { echo "no .whl/concurrency kit: make it first (evals/device/concurrency.sh)"; exit 1; }
  rm -rf "$CAMP/kopt" && mkdir -p "$CAMP/kopt/.whl"
  git -C "$MAIN" archive "$PIN" kopt index ingest corpora pyproject.toml README.md evals/suite evals/device \
    | tar x -C "$CAMP/kopt"
  rm -rf "$CAMP/kopt/evals/device/results"
  cp "$MAIN"/.whl/libcst-*.whl "$CAMP/kopt/.whl/"
  # the index kit, unpacked wheels and the int8 MiniLM in one .tar.xz (the zipped wheels would cost 4 MB more)
  rm -rf "$BUILD/kit" && mkdir -p "$BUILD/kit/site" && cp -r "$MAIN/.whl/concurrency/minilm" "$BUILD/kit/minilm"
  for whl in "$MAIN"/.whl/concurrency/*.whl; do (cd "$BUILD/kit/site" && "$PY" -m zipfile -e "$whl" .); done
  # what the import never reads, out: qdrant-edge's symbols and type stubs (0.5 MB of the 64 MiB a call may send)
  find "$BUILD/kit/site" -name '*.so' -exec strip --strip-unneeded {} + && find "$BUILD/kit/site" -name '*.pyi' -delete
  tar cf - -C "$BUILD/kit" site minilm | xz -9 -T2 > "$CAMP/kit.tar.xz"
  echo "$PIN" > "$CAMP/kopt/PIN"
fi
echo "pinned tree: kopt $PIN"

# kopt at PIN for this machine's Python, as the device installs it (kopt.index, kopt.ingest, kopt.corpora)
SITE=$BUILD/site
rm -rf "$SITE" && mkdir -p "$SITE" && cp -r "$CAMP/kopt/kopt" "$SITE/kopt"
for d in index ingest corpora; do ln -s "$CAMP/kopt/$d" "$SITE/kopt/$d"; done
kopt() { (cd "$BUILD" && PYTHONPATH=$SITE HF_HUB_OFFLINE=1 KOPT_SEARCH_WORKER=0 nice -n 10 "$PY" -m kopt.cli "$@"); }

# the synthesis: `kopt synthesize --no-index --diagnose-parents` over the campaign's store in a scratch KOPT_HOME
# (evals/RESULTS.md, "Synthesis from LLM wins"); its patterns/ is what the with-arm gets
SYN=$BUILD/synthesis
RECORD=$MAIN/evals/llm/heldout-2026-12-02/synthesis  # the one the experiment uses, committed: reused when present
if [ ! -f "$CAMP/synthesis.json" ] && [ -f "$RECORD/synthesize.json" ]; then
  rm -rf "$SYN" "$CAMP/homes.tar.xz" && mkdir -p "$SYN/patterns" && cp "$RECORD"/*.yaml "$SYN/patterns/" \
    && cp "$RECORD/synthesize.json" "$CAMP/synthesis.json"
fi
if [ ! -f "$CAMP/synthesis.json" ]; then
  rm -rf "$SYN" "$BUILD/store" "$CAMP/homes.tar.xz" && mkdir -p "$SYN" "$BUILD/store" && tar xzf "$STORE" -C "$BUILD/store"
  echo "synthesizing from $STORE"
  KOPT_HOME=$SYN kopt synthesize --store "$BUILD/store/.kopt" --no-index --diagnose-parents --json \
    > "$CAMP/synthesis.json.tmp" && mv "$CAMP/synthesis.json.tmp" "$CAMP/synthesis.json"
fi
if [ ! -f "$CAMP/homes.tar.xz" ]; then
  CURATED=$BUILD/homes/heldout-curated WITH=$BUILD/homes/heldout-synth
  if [ ! -f "$CURATED/index/catalog.json" ]; then
    rm -rf "$CURATED" && mkdir -p "$CURATED/cache"
    [ -n "${VECTORS:-}" ] && cp "$VECTORS" "$CURATED/cache/vectors.sqlite"  # vectors by (model, text hash): reusable
    for corpus in passes patterns triton-pkg; do KOPT_HOME=$CURATED kopt ingest "$corpus"; done
  fi
  # the with-arm: the same index (hard links: a published collection is never written again), the synthesized
  # patterns, and their points upserted into its patterns collection as `kopt synthesize` does without --no-index
  rm -rf "$WITH" && cp -al "$CURATED" "$WITH" && rm -rf "$WITH/index/readers" "$WITH/cache" && cp "$CURATED/index/catalog.json" "$WITH/index/catalog.json.new" \
    && mv "$WITH/index/catalog.json.new" "$WITH/index/catalog.json" && mkdir -p "$WITH/patterns" && cp "$SYN"/patterns/*.yaml "$WITH/patterns/"
  KOPT_HOME=$WITH PYTHONPATH=$SITE HF_HUB_OFFLINE=1 "$PY" -c "
from pathlib import Path
from kopt.config import load_settings
from kopt.synthesize import upsert_index
fresh = [p for p in sorted(Path('$WITH/patterns').glob('*.yaml')) if 'kind: synthesized' in p.read_text()]
print(upsert_index(load_settings(), fresh))  # as kopt synthesize: new patterns, not the curated ones' overlays"
  # what travels: the indexes (not their readers' views) and the synthesized patterns, no caches
  tar cf - -C "$BUILD/homes" --exclude=readers --exclude=cache --exclude=sandbox-cache --exclude=.write.lock \
    heldout-curated heldout-synth | xz -9 -T2 > "$CAMP/homes.tar.xz.tmp" && mv "$CAMP/homes.tar.xz.tmp" "$CAMP/homes.tar.xz"
fi
ls "$MAIN"/.camp/bubblewrap_*.deb > /dev/null 2>&1 && cp "$MAIN"/.camp/bubblewrap_*.deb "$CAMP/" \
  || ls "$CAMP"/bubblewrap_*.deb > /dev/null 2>&1 \
  || (cd "$CAMP" && apt-get download bubblewrap) || { echo "no bubblewrap .deb for the sandbox"; exit 1; }
"$PY" - "$CAMP/synthesis.json" <<'EOF'
import json, sys
actions = json.load(open(sys.argv[1]))["actions"]
for kind in ("create", "update"):
    done = [f"{a['pattern_id']} {a['wins']}/{a['tries']}" for a in actions if a["kind"] == kind]
    print(f"synthesis, {kind}: {len(done)} patterns (wins/tries):", ", ".join(done))
EOF
# a call sends the tree (tracked and untracked files git does not ignore) and the carry: 64 MiB in all
TREE=$(cd "$MAIN" && { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 cat 2> /dev/null | wc -c)
CARRY=$(tar cf - -C "$MAIN" .camp/heldout | wc -c)
echo "a call sends $(( (TREE + CARRY) >> 20 )) MiB: tree $(( TREE >> 20 )) MiB, carry [\".camp/heldout\"] $(( CARRY >> 20 )) MiB (limit 64)"
