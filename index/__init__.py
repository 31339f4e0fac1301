"""The knowledge index: embeddings, Qdrant storage (Edge or server), hybrid retrieval (kopt.index)."""

import os
import sys


def _load_numpy_with_one_blas_thread() -> None:
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


_load_numpy_with_one_blas_thread()

from kopt.index.search import Hit, Index, open_index  # noqa: E402

__all__ = ["Hit", "Index", "KoptRetriever", "open_index"]


def __getattr__(name: str):
    if name == "KoptRetriever":  # llama-index is slow to import; load it only when asked for
        from kopt.index.retriever import KoptRetriever

        return KoptRetriever
    raise AttributeError(name)
