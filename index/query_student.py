"""The default model's query encoder, distilled into half its layers.

Embedding the query with the 6-layer MiniLM is most of a warm search (~17 of ~30 ms on 2 cores). For indexes embedded
with the default model, queries take a 3-layer student instead, trained to reproduce the MiniLM's vectors of questions
(evals/retrieval/distill/train.py; the check that let it ship is in evals/RESULTS.md). It keeps the MiniLM's
vocabulary and embeddings, so only its layers ship (fp16). Chunks and their expansion questions keep the MiniLM's own
vectors. KOPT_QUERY_ENCODER=full embeds queries with the MiniLM itself.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kopt.index import bert_query, query_encoder

LAYERS = Path(__file__).parent / "models" / "query-student.safetensors"


def serves(model_name: str) -> bool:
    """Whether queries against an index embedded with this model take the student."""
    from kopt.index.embed import DEFAULT_MODEL

    return model_name == DEFAULT_MODEL and query_encoder() != "full" and LAYERS.is_file()


@cache
def _load(model_dir: Path):
    """The MiniLM's config, tokenizer and embeddings with the student's layers in place of its own."""
    config, tokenizer, weights = bert_query.load(model_dir)
    student = bert_query.read_safetensors(LAYERS)
    weights = {k: v for k, v in weights.items() if not k.startswith("encoder.layer.")}
    weights.update((k, v.astype("float32")) for k, v in student.items())
    layers = 1 + max(int(k.split(".")[2]) for k in student)
    return {**config, "num_hidden_layers": layers}, tokenizer, weights


def encode_query(model_dir: Path, text: str, max_tokens: int) -> list[float]:
    return bert_query.encode_with(*_load(model_dir), text, max_tokens)
