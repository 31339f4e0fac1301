"""The trained cross-encoder reads the hybrid top hits with the question and reorders them (mode hybrid+rerank).

Why: hybrid scores a chunk by words and one vector each; a cross-encoder reads the question and the chunk together,
so it can tell the function that decides apart from its neighbours that share its words. kopt trains its own
(`kopt index train`, kopt.index.train) into <KOPT_HOME>/models/kopt-rerank-minilm. It is opt-in: it reads
RERANK_DEPTH chunks per query, which costs far more on a CPU than the search itself (evals/RESULTS.md).
"""

from __future__ import annotations

from functools import cache

from kopt.errors import KoptError
from kopt.index.hits import Hit

RERANK_DEPTH = 20  # hybrid hits the cross-encoder reads
RERANK_WEIGHT = 1.0  # final score = hybrid score / best hybrid score + RERANK_WEIGHT x the cross-encoder's probability
MAX_TOKENS = 128   # question + chunk, as trained


@cache
def load_reranker(name: str):
    """The cross-encoder `name` from <KOPT_HOME>/models (or a folder), float32, offline; KoptError if absent."""
    import os

    from kopt.index.embed import model_dir

    folder = model_dir(name)
    if folder is None:
        raise KoptError(f"no reranker model {name!r}", hint="train one with `kopt index train` (it goes to "
                                                          "<KOPT_HOME>/models), or search without rerank")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return CrossEncoder(str(folder), max_length=MAX_TOKENS, device=device, model_kwargs={"dtype": torch.float32})


def relevance(name: str, query: str, texts: list[str]) -> list[float]:
    """The cross-encoder's probability that each chunk text answers the query (its sigmoid head)."""
    from kopt.index.embed import cpu_autocast

    with cpu_autocast():  # a CPU-only autocast: on a GPU the model runs as loaded
        probs = load_reranker(name).predict([(query, t) for t in texts], batch_size=32, show_progress_bar=False, convert_to_numpy=True)
    return [float(p) for p in probs]


def rerank(name: str, query: str, hits: list[Hit], depth: int = RERANK_DEPTH, weight: float = RERANK_WEIGHT) -> list[Hit]:
    """The top `depth` hits reordered by hybrid score (normalised) + weight x relevance; the rest follow as they were."""
    head, tail = hits[:depth], hits[depth:]
    if not head:
        return hits
    top = max(h.score for h in head) or 1.0
    probs = relevance(name, query, [h.text for h in head])
    scored = [Hit(round(h.score / top + weight * p, 4), h.text, h.chunk.with_(rerank=round(p, 4))) for h, p in zip(head, probs)]
    return sorted(scored, key=lambda h: -h.score) + tail
