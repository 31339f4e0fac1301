# Helpers the device scripts share (sourced by blind_looks.sh and open_evals.sh, after install.sh set KOPT_ROOT):
# a kopt pinned by commit, the kopt command of whichever install PYTHONPATH names, and an eval's totals in one line.

pinned_kopt() {  # COMMIT: install .camp/looks/kopt-COMMIT.tar.gz (a `git archive` of it) into /tmp/kopt-look-COMMIT
  local d=/tmp/kopt-look-$1
  mkdir -p "$d/src" && tar xzf "$KOPT_ROOT/.camp/looks/kopt-$1.tar.gz" -C "$d/src" \
    && python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target "$d" "$d/src" >/dev/null
}

# the kopt command of the kopt on PYTHONPATH (a --target install has no console script); an array, so `timeout` runs it
KOPT_CLI=(python3 -c "import sys; from kopt.cli import main; sys.argv[0] = 'kopt'; main()")

eval_totals() {  # FILE LABEL: the per-mode totals of a `kopt eval diagnosis --json` result
  python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2], r.get('kopt', ''), \
json.dumps({k: v['all'] for k, v in r['summary'].items()}))" "$1" "$2" 2>/dev/null
}
