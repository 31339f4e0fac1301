"""The index as a llama-index retriever, for query engines and RetrieverEvaluator."""

from __future__ import annotations

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from kopt.index.search import Index


class KoptRetriever(BaseRetriever):
    """Hybrid search over an Index; nodes carry the chunk metadata and the chunk's point id."""

    def __init__(self, index: Index, *, corpus: str | list[str] | None = None, k: int = 10, mode: str = "hybrid",
                 filters: dict | None = None):
        super().__init__()
        self.index, self.corpus, self.k, self.mode, self.filters = index, corpus, k, mode, filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.index.search(query_bundle.query_str, corpus=self.corpus, k=self.k, mode=self.mode, filters=self.filters)
        return [NodeWithScore(node=TextNode(id_=f"{h.chunk.corpus}:{h.cite()}", text=h.text, metadata=h.meta),
                              score=h.score)
                for h in hits]
