"""Benchmark the knowledge index on a Triton checkout: full ingest, unchanged re-ingest, warm hybrid
query p50, and `kopt search` end to end cold. Uses a fresh KOPT_HOME (cold vector cache) unless
--home is given; prints one JSON object (and writes it to --out if given).

    .venv/bin/python evals/bench_ingest.py /work/src/triton [--home DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = ["where does the coalesce pass pick the memory access order", "software pipelining num_stages on hopper",
           "convert_layout removal", "wgmma operand in shared memory", "register spill ptxas", "TMA descriptor lowering",
           "vectorization width of global loads", "MLIR_ENABLE_DUMP", "tt.dot lowering to mma", "warp specialization"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--home", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="kopt-bench-"))
    env = {**os.environ, "KOPT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    kopt = str(Path(sys.executable).parent / "kopt")

    cpu: dict[str, float] = {}

    def timed(cmd: list[str]) -> tuple[float, dict, int]:
        """Wall seconds, parsed JSON output and peak RSS (KB); CPU seconds go to `cpu` (the machine may be shared)."""
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], env=env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
        rss_kb, user, system = done.stderr.strip().splitlines()[-1].split()
        cpu[f"{len(cpu) + 1}: {' '.join(cmd[1:3])}"] = round(float(user) + float(system), 1)
        return time.perf_counter() - start, json.loads(done.stdout) if done.stdout.strip().startswith(("{", "[")) else {}, int(rss_kb)

    full_s, full, full_rss = timed([kopt, "ingest", "triton", "--path", str(args.checkout), "--json"])
    again_s, again, _ = timed([kopt, "ingest", "triton", "--path", str(args.checkout), "--json"])
    cold_sparse_s, _, _ = timed([kopt, "search", QUERIES[0], "--corpus", "triton", "--mode", "sparse", "--json"])
    cold_hybrid_s, _, _ = timed([kopt, "search", QUERIES[0], "--corpus", "triton", "--json"])

    os.environ.update(env)
    from kopt.config import load_settings
    from kopt.index import open_index

    index = open_index(load_settings())
    index.search(QUERIES[0], corpus="triton")  # load the model once
    warm = []
    for q in QUERIES * 3:
        start = time.perf_counter()
        index.search(q, corpus="triton", k=10)
        warm.append(time.perf_counter() - start)
    result = {
        "machine": f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the end", "date": time.strftime("%Y-%m-%d"),
        "files": full["files"], "chunks": full["chunks"], "embedded": full["embedded"], "fallbacks": full["fallbacks"],
        "full_ingest_s": round(full_s, 1), "full_ingest_peak_rss_mb": round(full_rss / 1024),
        "reingest_unchanged_s": round(again_s, 1), "reingest_new": again["new"], "reingest_embedded": again["embedded"],
        "hybrid_query_p50_warm_ms": round(statistics.median(warm) * 1000, 1),
        "hybrid_query_p50_warm_incl_query_embedding_ms": None,
        "search_cli_cold_sparse_s": round(cold_sparse_s, 2), "search_cli_cold_hybrid_s": round(cold_hybrid_s, 2),
    }
    fresh = []
    for i, q in enumerate(QUERIES):
        start = time.perf_counter()
        index.search(f"{q} {i}", corpus="triton", k=10)  # a new string: the query embedding is computed too
        fresh.append(time.perf_counter() - start)
    result["hybrid_query_p50_warm_incl_query_embedding_ms"] = round(statistics.median(fresh) * 1000, 1)
    result["cpu_seconds"] = cpu
    result["self_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
