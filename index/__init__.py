"""The knowledge index: embeddings, Qdrant storage (Edge or server), hybrid retrieval (kopt.index).

Its names load on first use: `kopt search` that a warm worker answers (kopt.index.worker) needs neither
numpy nor the engine.
"""

import os
import sys

__all__ = ["Hit", "Index", "KoptRetriever", "open_index"]


def load_numpy_with_one_blas_thread() -> None:
    """Query embeddings are small matrix products, where OpenBLAS's thread hand-offs cost more than they save
    (a 128-token query: 370 ms with 2 threads on a busy 2-core box, 90 ms with 1). OpenBLAS reads its thread count
    once, when numpy loads; the variable is put back at once so that child processes are not affected."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def __getattr__(name: str):
    if name in ("Hit", "Index", "open_index"):
        from kopt.index import search

        return getattr(search, name)
    if name == "KoptRetriever":  # llama-index is slow to import; load it only when asked for
        from kopt.index.retriever import KoptRetriever

        return KoptRetriever
    raise AttributeError(name)
