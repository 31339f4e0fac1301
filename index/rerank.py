"""Second stage: rerank the hybrid top-N by late interaction (ColBERT-style MaxSim).

A cross-encoder would be the usual second stage, but no package any registry here serves carries one's
weights (flashrank, rerankers, bge-m3-lite and the like fetch them from a model hub at run time; see
evals/retrieval/MISSES.md, Update 6). So the stage reuses the index's own sentence model: each query
token's embedding meets its best-matching token of the chunk, and the mean of those maxima scores the chunk.
Unlike the chunk's pooled vector, this keeps a rare query word from being averaged away by the rest.

The rerank score, min-max normalised over the candidates, is added to their hybrid score with a
small weight, so it reorders close calls rather than overruling the first stage. On the dev half it
did not pay (MISSES.md, Update 6): `hybrid` stays the default mode, `hybrid+rerank` is opt-in.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

RERANK_DEPTH = 40  # hybrid candidates reordered (dev: the file answer of every question lies in the top 20)
RERANK_WEIGHT = 0.1  # the MaxSim share added to the hybrid score (dev sweep 0.05-1.0: see MISSES.md Update 6)
MAX_TOKENS = 128  # chunk tokens read, as the dense index reads them
_CACHE_SIZE = 4096  # chunks' token matrices kept per process (~100 KB each at 128 x 384 float16)
_token_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Mean over query tokens of the best cosine with any document token (rows L2-normalised)."""
    if not len(query_tokens) or not len(doc_tokens):
        return 0.0
    return float((query_tokens @ doc_tokens.T).max(axis=1).mean())


def token_embeddings(model_name: str, texts: list[str]) -> list[np.ndarray]:
    """Unit-length contextual embeddings of each text's tokens, [CLS] and [SEP] dropped; cached by text."""
    from kopt.index.embed import load_model

    missing = [t for t in dict.fromkeys(texts) if (model_name, t) not in _token_cache]
    if missing:
        model = load_model(model_name)
        limit = model.max_seq_length
        model.max_seq_length = min(limit, MAX_TOKENS)
        try:
            outs = model.encode(missing, output_value="token_embeddings", batch_size=32, show_progress_bar=False,
                                convert_to_numpy=False)
        finally:
            model.max_seq_length = limit
        for text, out in zip(missing, outs):
            vecs = out[1:-1].float().numpy()
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            _token_cache[(model_name, text)] = vecs.astype(np.float16)
            while len(_token_cache) > _CACHE_SIZE:
                _token_cache.popitem(last=False)
    return [_token_cache[(model_name, t)].astype(np.float32) for t in texts]


def rerank(model_name: str, query: str, hits: list, weight: float | None = None) -> list:
    """The hits (objects with .score and .text), rescored as hybrid + weight x normalised MaxSim, best first."""
    weight = RERANK_WEIGHT if weight is None else weight
    if len(hits) < 2 or weight == 0:
        return list(hits)
    query_tokens, *doc_tokens = token_embeddings(model_name, [query, *(h.text for h in hits)])
    raw = np.array([maxsim(query_tokens, d) for d in doc_tokens])
    lo, hi = raw.min(), raw.max()
    norm = (raw - lo) / (hi - lo) if hi > lo else np.zeros_like(raw)
    for hit, gain in zip(hits, norm):
        hit.score = round(hit.score + weight * float(gain), 4)
    return sorted(hits, key=lambda h: -h.score)
