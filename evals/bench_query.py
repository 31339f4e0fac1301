"""Benchmark warm queries on the ingested index: p50 / p90 of hybrid search over a question set's questions.

Each pass clears the query-embedding cache, so every query pays for its dense vector as a new question would;
the index stays open and its points' fields are read first, as in the search worker (`--no-preload`: as a first
search in process does). Prints one JSON object.

    .venv/bin/python evals/bench_query.py [--gold evals/retrieval/tune.yaml] [--passes 3] [--mode hybrid] [--rerank-depth 30]

Queries embed as `kopt search` embeds them: the distilled 3-layer encoder for default-model indexes
(KOPT_QUERY_ENCODER=full times the 6-layer MiniLM instead).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import yaml


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gold", type=Path, default=Path(__file__).parent / "retrieval" / "tune.yaml")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--no-preload", action="store_true", help="one pass, each candidate's fields read on first sight")
    ap.add_argument("--rerank-depth", type=int, default=0, help="also time the trained cross-encoder over this many hits")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from kopt.config import load_settings
    from kopt.index import open_index
    from kopt.index import search as search_module

    questions = [q["question"] for q in yaml.safe_load(args.gold.read_text())["questions"]]
    index = open_index(load_settings())
    index.search("warm up", k=args.k, mode=args.mode)  # open every collection, load the encoder
    if args.no_preload:
        args.passes = 1
    elif hasattr(index, "preload"):  # (kopt before 974a6af had no field cache: timing an older checkout)
        index.preload()
    times, rerank_times = [], []
    for _ in range(args.passes):
        search_module._query_embedding.cache_clear()
        for q in questions:
            start = time.perf_counter()
            hits = index.search(q, k=max(args.k, args.rerank_depth), mode=args.mode)
            times.append(time.perf_counter() - start)
            if args.rerank_depth:
                from kopt.index.rerank import relevance
                from kopt.index.train import RERANKER

                start = time.perf_counter()
                relevance(RERANKER, q, [h.text for h in hits[: args.rerank_depth]])
                rerank_times.append(time.perf_counter() - start)
    index.close()
    ms = sorted(t * 1000 for t in times)
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} CPU cores, load {os.getloadavg()[0]:.1f}",
              "gold": args.gold.name, "questions": len(questions), "passes": args.passes, "preload": not args.no_preload, "mode": args.mode,
              "p50_ms": round(statistics.median(ms), 1), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 1)}
    if rerank_times:
        rr = sorted(t * 1000 for t in rerank_times)
        result.update(rerank_depth=args.rerank_depth, rerank_p50_ms=round(statistics.median(rr), 1),
                      rerank_p90_ms=round(rr[int(0.9 * (len(rr) - 1))], 1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
