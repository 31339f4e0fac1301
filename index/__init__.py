"""The knowledge index: embeddings, Qdrant storage (Edge or server), hybrid retrieval (kopt.index)."""

from kopt.index.search import Hit, Index, open_index

__all__ = ["Hit", "Index", "KoptRetriever", "open_index"]


def __getattr__(name: str):
    if name == "KoptRetriever":  # llama-index is slow to import; load it only when asked for
        from kopt.index.retriever import KoptRetriever

        return KoptRetriever
    raise AttributeError(name)
