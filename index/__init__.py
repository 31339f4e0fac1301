"""The knowledge index: embeddings, Qdrant storage (Edge or server), hybrid retrieval (kopt.index).

Its names load on first use: `kopt search` that a warm worker answers (kopt.index.worker) needs neither
numpy nor the engine.
"""

import os
import sys

__all__ = ["Hit", "Index", "KoptRetriever", "open_index"]

QUERY_ENCODER = "KOPT_QUERY_ENCODER"  # "full": queries embed with the index's own model, not its distilled student


def query_encoder() -> str:
    return os.environ.get(QUERY_ENCODER, "")


def load_numpy_for_queries() -> None:
    """Query embeddings are small matrix products (index/bert_query.py). OpenBLAS's idle threads spin for ~0.1 s
    by default, which is ruinous beside busy cores (a 46-token query: 21 ms on one thread, 33 ms on two beside a
    busy core, 700 ms beside two); told to sleep almost at once (OPENBLAS_THREAD_TIMEOUT=4, its minimum), two
    threads take 16 ms on a quiet 2-core box, 26 ms beside one busy core and 18 ms beside two (evals/RESULTS.md).
    OpenBLAS reads both once, when numpy loads; the variables are put back at once so child processes are not
    affected, and a numpy already loaded, or a thread count the user set, is left alone."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    chosen = {"OPENBLAS_NUM_THREADS": str(min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)),
              "OPENBLAS_THREAD_TIMEOUT": os.environ.get("OPENBLAS_THREAD_TIMEOUT", "4")}
    saved = {k: os.environ.get(k) for k in chosen}
    os.environ.update(chosen)
    try:
        import numpy  # noqa: F401
    finally:
        for key, value in saved.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value


def __getattr__(name: str):
    if name in ("Hit", "Index", "open_index"):
        from kopt.index import search

        return getattr(search, name)
    if name == "KoptRetriever":  # llama-index is slow to import; load it only when asked for
        from kopt.index.retriever import KoptRetriever

        return KoptRetriever
    raise AttributeError(name)
