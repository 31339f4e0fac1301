"""Benchmark: many readers while one ingest writes (kopt issue 18).

Builds a private index of a project corpus (passes by default), then times `open_index -> search -> close`
(what one `kopt search`, MCP call or optimize round does, without interpreter start-up) in separate processes:
  lone    one reader, nothing else running
  idle8   8 readers at once, no ingest (CPU contention alone)
  ingest8 8 readers at once while `kopt ingest` writes a new version of the corpus
and prints failures, p50/p95 latency, the versions the readers saw, and the machine. Not a test: numbers vary
with the machine's load, so it prints the load average next to them. With fewer than 8 cores the readers wait for
CPU, so ingest8 is also given against idle8. With --worker every call asks the index's warm search worker
(kopt.index.worker, what `kopt search` does) and opens the index itself only when the worker cannot answer
(counted as `in_process`).

    .venv/bin/python evals/bench_concurrency.py [--corpus passes] [--mode hybrid] [--seconds 10] [--worker] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = ["how does the pipeliner decide the number of stages", "why is my load not vectorized",
           "what does coalescing change in the layout", "shared memory bank conflicts in a transpose",
           "when are layout conversions removed"]


def reader(home: str, corpus: str, mode: str, via_worker: bool, ready, go, results) -> None:
    """One reader process: search in a loop until told to stop; every call opens and closes the index, or asks
    the worker."""
    os.environ["KOPT_HOME"] = home
    from kopt.config import load_settings
    from kopt.index import open_index, worker

    settings = load_settings()
    if mode != "sparse":  # warm up the embedding model outside the timed calls (the index is not touched yet)
        from kopt.index.embed import embed_query

        embed_query(settings.embed_model, QUERIES[0])
    deadline = time.time() + 60
    while via_worker and worker.call(settings, "search", QUERIES[0], corpus=corpus, mode=mode) is None:
        if time.time() > deadline:
            sys.exit("the search worker did not start")
        time.sleep(0.2)  # the first call started it
    ready.release()
    go.wait()  # start together
    out, i = [], 0
    while not stop_flag(home):
        query, t0 = QUERIES[i % len(QUERIES)], time.perf_counter()
        try:
            hits = worker.call(settings, "search", query, corpus=corpus, k=10, mode=mode) if via_worker else None
            call = {"in_process": hits is None}
            if hits is None:
                index = open_index(settings)
                try:
                    hits = index.search(query, corpus=corpus, k=10, mode=mode)
                finally:
                    index.close()
            out.append({**call, "t": t0, "s": time.perf_counter() - t0, "version": hits[0].meta["version"] if hits else None})
        except Exception as exc:  # a failed search is the thing this counts
            out.append({"t": t0, "s": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"[:300]})
        i += 1
    results.put(out)


def stop_flag(home: str) -> bool:
    return Path(home, "bench.stop").exists()


def phase(home: Path, corpus: str, mode: str, via_worker: bool, n: int, seconds: float, ingest_cmd: list[str] | None) -> dict:
    """Run n readers for `seconds` (or for as long as the ingest runs, plus a second); collect their calls."""
    (home / "bench.stop").unlink(missing_ok=True)
    ctx = mp.get_context("spawn")
    ready, go, results = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=reader, args=(str(home), corpus, mode, via_worker, ready, go, results)) for _ in range(n)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    go.set()
    started = time.perf_counter()
    ingest = None
    if ingest_cmd:
        ingest = subprocess.run(ingest_cmd, capture_output=True, text=True, env={**os.environ, "KOPT_HOME": str(home)})
        if ingest.returncode != 0:
            sys.exit(f"ingest failed: {ingest.stderr[-2000:]}")
        time.sleep(1.0)  # a few searches of the new version
    else:
        time.sleep(seconds)
    (home / "bench.stop").touch()
    calls = [c for _ in procs for c in results.get()]
    for p in procs:
        p.join()
    ok = [c["s"] for c in calls if "error" not in c]
    versions: dict[str, int] = {}
    for c in calls:
        if "version" in c:
            versions[c["version"]] = versions.get(c["version"], 0) + 1
    return {"readers": n, "seconds": round(time.perf_counter() - started, 1), "calls": len(calls),
            "failures": len(calls) - len(ok), "in_process": sum(1 for c in calls if c.get("in_process")),
            "errors": sorted({c["error"] for c in calls if "error" in c})[:3],
            "p50_ms": round(1000 * statistics.median(ok), 1) if ok else None,
            "p95_ms": round(1000 * statistics.quantiles(ok, n=20)[-1], 1) if len(ok) >= 20 else None,
            "versions": versions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="passes", choices=["passes", "patterns"])
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "sparse", "dense"])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the lone and idle8 phases")
    ap.add_argument("--worker", action="store_true", help="ask the index's warm search worker, as `kopt search` does")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from kopt.ingest.manifest import corpora_dir

    with tempfile.TemporaryDirectory(prefix="kopt-bench-conc-") as tmp:
        home, source = Path(tmp) / "home", Path(tmp) / args.corpus
        shutil.copytree(corpora_dir() / args.corpus, source)
        kopt = [sys.executable, "-m", "kopt.cli", "ingest", args.corpus, "--path", str(source), "--json"]
        first = subprocess.run(kopt, capture_output=True, text=True, env={**os.environ, "KOPT_HOME": str(home)})
        if first.returncode != 0:
            sys.exit(f"ingest failed: {first.stderr[-2000:]}")
        for path in sorted(source.rglob("*.*")):  # a new version: every file changes, every chunk is stored again
            path.write_text(path.read_text() + "\n\n<!-- bench edit -->\n" if path.suffix == ".md" else
                            path.read_text() + "\n# bench edit\n")
        report = {"machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores",
                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "corpus": args.corpus, "mode": args.mode,
                  "worker": args.worker,
                  "load_before": os.getloadavg()[0]}
        report["lone"] = phase(home, args.corpus, args.mode, args.worker, 1, args.seconds, None)
        report["idle8"] = phase(home, args.corpus, args.mode, args.worker, 8, args.seconds, None)
        report["ingest8"] = phase(home, args.corpus, args.mode, args.worker, 8, args.seconds, kopt)
        report["load_after"] = os.getloadavg()[0]
        lone, idle = report["lone"]["p50_ms"], report["idle8"]["p50_ms"]
        for name in ("idle8", "ingest8"):
            p50 = report[name]["p50_ms"]
            report[name]["p50_vs_lone"] = round(p50 / lone, 2) if p50 and lone else None
        # 8 readers on fewer than 8 cores wait for CPU: ingest8 against idle8 is what the ingest itself costs them
        report["ingest8"]["p50_vs_idle8"] = round(report["ingest8"]["p50_ms"] / idle, 2) if idle else None
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{report['machine']}, {report['date']}, corpus {args.corpus}, mode {args.mode}, "
          f"{'through the search worker' if args.worker else 'index opened per call'}, "
          f"load {report['load_before']:.1f} -> {report['load_after']:.1f}")
    for name in ("lone", "idle8", "ingest8"):
        r = report[name]
        print(f"{name:<8} readers {r['readers']}  calls {r['calls']:>4}  failures {r['failures']}  in process "
              f"{r['in_process']}  p50 {r['p50_ms']} ms"
              f"  p95 {r['p95_ms']} ms  x{r.get('p50_vs_lone', 1.0)} lone"
              + (f" (x{r['p50_vs_idle8']} idle8)" if r.get("p50_vs_idle8") else "") + f"  versions {r['versions']}"
              + (f"  errors {r['errors']}" if r["errors"] else ""))


if __name__ == "__main__":
    main()
