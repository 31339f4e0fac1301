#!/usr/bin/env bash
# The main job on the embedded defaults (`make demo`): each step is a command a user would type, printed before it runs.
set -euo pipefail
KOPT=${1:-kopt}
PY=${2:-python3}  # the interpreter kopt runs on: it decides whether there is a GPU to optimize on
step() { printf '\n== %s\n' "$1"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "compile an example kernel to its IR stages (sm_90, no GPU needed)"
printf '$ %s | head -40\n' "$KOPT compile examples/vector_add.py --stage ptx"
# Piped, rich would draw the table at 80 columns: give it the terminal's width.
COLUMNS=$(tput cols 2>/dev/null || echo 100) "$KOPT" compile examples/vector_add.py --stage ptx | head -40
step "validate it (the Triton interpreter on CPU, or the GPU when there is one)"
run "$KOPT" validate examples/vector_add.py
step "ingest the knowledge the diagnosis cites: pass notes, patterns, the installed triton package (offline; a few minutes, each quiet until its progress bar appears)"
run "$KOPT" ingest passes
run "$KOPT" ingest patterns
run "$KOPT" ingest triton-pkg
step "diagnose an example: escalates L1 -> L3 and stops at the first grounded hypothesis"
run "$KOPT" diagnose examples/strided_scale.py --no-gpu
step "ask why the load on line 15 is not vectorized (no LLM: the structured evidence answer)"
run "$KOPT" ask "why no vectorization here" --kernel examples/strided_scale.py:15 --offline
step "optimize it, on a GPU: each round diagnoses, rewrites, validates and times one candidate, and is recorded"
if "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  run "$KOPT" optimize examples/strided_scale.py --rounds 3 --minutes 3 --proposer recipes --out .kopt/strided_scale_kopt.py
else
  echo "no GPU here: left out (\`kopt optimize\` times every candidate on the GPU)"
fi
# The run just recorded (on a GPU), else a placeholder: the report command below is then one to copy as is.
RUN=$("$KOPT" runs list --json 2>/dev/null | "$PY" -c 'import json, sys
items = json.load(sys.stdin)["items"]
print(items[-1]["run_id"] if items else "RUN")' 2>/dev/null) || RUN=RUN
if [ "$RUN" = RUN ]; then WHICH="RUN: an id from \`$KOPT runs list\`"; else WHICH="the latest run in this workspace"; fi
cat <<EOT

== done. Next steps, to copy:
  $KOPT diagnose examples/strided_scale.py
      the evidence, level by level (on a GPU it also profiles: L2); --json for scripts; your own task file works too
  $KOPT optimize examples/strided_scale.py --proposer llm --llm-exchange llm-exchange --rounds 3
      you (or any agent) are the LLM: answer each llm-exchange/<id>.reply.md (\`$KOPT runs pending\` lists them),
      then \`$KOPT optimize --resume RUN --llm-exchange llm-exchange\`; kopt validates and times every reply
  $KOPT runs report $RUN --html report.html
      per round: per-case speedups on a log scale, regressions flagged, the evidence and the code diff
      ($WHICH)
EOT
