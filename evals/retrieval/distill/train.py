"""Distil the 6-layer MiniLM's question vectors into a few of its layers, in plain torch (a GPU machine here has no
sentence-transformers). The teacher's vectors are computed from the same weights. The student starts from the named
layers, with its embeddings frozen, and learns with 1 - cosine to the teacher as the loss, in batches of texts of like
length (random batches padded to their longest cost ~30x as much on a CPU). The first 1000 questions and their spans
are held out. The student's layers are saved in fp16 as RESULTS_DIR/student-<layers>-<epochs>.safetensors.

    python evals/retrieval/distill/train.py DATA.pt RESULTS_DIR EPOCHS LAYERS [LR]   # shipped: 10 0,2,4 3e-3
"""

from __future__ import annotations

import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

HELD_OUT, BATCH, LR = 1000, 128, 3e-3  # LR: chosen on the held-out cosine (README)


class MiniLM:
    """A BERT encoder's forward pass (mean pooled, normalised) over a dict of its weights."""

    def __init__(self, weights: dict, config: dict):
        self.w, self.heads, self.eps = weights, config["num_attention_heads"], config["layer_norm_eps"]

    def layer_params(self, i: int) -> dict:
        prefix = f"encoder.layer.{i}."
        return {k[len(prefix):]: v for k, v in self.w.items() if k.startswith(prefix)}

    def _norm(self, x, weight, bias):
        return F.layer_norm(x, x.shape[-1:], weight, bias, self.eps)

    def _layer(self, x, mask, p):
        batch, n, dim = x.shape
        q, k, v = (F.linear(x, p[f"attention.self.{t}.weight"], p[f"attention.self.{t}.bias"])
                   .view(batch, n, self.heads, -1).transpose(1, 2) for t in ("query", "key", "value"))
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, None, :]).transpose(1, 2).reshape(batch, n, dim)
        x = self._norm(x + F.linear(att, p["attention.output.dense.weight"], p["attention.output.dense.bias"]),
                       p["attention.output.LayerNorm.weight"], p["attention.output.LayerNorm.bias"])
        h = F.gelu(F.linear(x, p["intermediate.dense.weight"], p["intermediate.dense.bias"]))
        return self._norm(x + F.linear(h, p["output.dense.weight"], p["output.dense.bias"]),
                          p["output.LayerNorm.weight"], p["output.LayerNorm.bias"])

    def encode(self, ids, mask, layers: list[dict], normalise: bool = True):
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for p in layers:
            x = self._layer(x, mask, p)
        m = mask.float()[..., None]
        pooled = (x * m).sum(1) / m.sum(1)
        return F.normalize(pooled, dim=-1) if normalise else pooled


def by_length(rows: list[int], lengths: torch.Tensor, size: int) -> list[list[int]]:
    """The rows in batches of `size`, each of texts of like length."""
    rows = sorted(rows, key=lambda i: int(lengths[i]))
    return [rows[b:b + size] for b in range(0, len(rows), size)]


def main(data: str, out: str, epochs: int, layers: list[int], lr: float) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    d = torch.load(data)
    model = MiniLM({k: v.to(device).float() for k, v in d["weights"].items()}, d["config"])
    ids, mask, n = d["ids"].long().to(device), d["mask"].to(device), d["questions"]
    lengths = d["mask"].sum(1)

    def encode(batch: list[int], layers: list[dict]) -> torch.Tensor:
        width = int(lengths[batch].max())
        return model.encode(ids[batch, :width], mask[batch, :width], layers)

    teacher = [model.layer_params(i) for i in range(d["config"]["num_hidden_layers"])]
    kept = f"{data}.teacher.pt"  # the teacher's vectors, reused by later runs (~3 min on 2 cores)
    if os.path.exists(kept):
        target = torch.load(kept).to(device)
    else:
        target = torch.zeros(len(ids), d["config"]["hidden_size"], device=device)
        with torch.no_grad():
            for batch in by_length(list(range(len(ids))), lengths, 512):
                target[batch] = encode(batch, teacher)
        torch.save(target.cpu(), kept)
    held = {"questions": list(range(HELD_OUT)), "spans": list(range(n, n + HELD_OUT))}
    train = list(range(HELD_OUT, n)) + list(range(n + HELD_OUT, len(ids)))
    student = [{k: v.clone().requires_grad_(True) for k, v in model.layer_params(i).items()} for i in layers]

    def held_out() -> str:
        with torch.no_grad():
            cos = {name: (encode(rows, student) * target[rows]).sum(-1) for name, rows in held.items()}
        return " ".join(f"{name} mean {c.mean():.4f} p5 {c.kthvalue(HELD_OUT // 20).values:.4f}" for name, c in cos.items())

    batches = by_length(train, lengths, BATCH)
    steps = epochs * len(batches)
    opt = torch.optim.AdamW([p for layer in student for p in layer.values()], lr=lr, weight_decay=0.0)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / warm, 0.5 * (1 + math.cos(math.pi * i / steps))))
    draw, started = torch.Generator().manual_seed(0), time.time()
    print(f"start: {held_out()}", flush=True)
    for epoch in range(epochs):
        for b in torch.randperm(len(batches), generator=draw).tolist():
            loss = (1 - (encode(batches[b], student) * target[batches[b]]).sum(-1)).mean()
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"epoch {epoch + 1}: {held_out()} ({time.time() - started:.0f} s)", flush=True)
    os.makedirs(out, exist_ok=True)
    name = os.path.join(out, f"student-{''.join(map(str, layers))}-{epochs}.safetensors")
    save_file({f"encoder.layer.{j}.{k}": v.detach().half().cpu().contiguous() for j, p in enumerate(student)
               for k, v in p.items()}, name)
    print(name)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(x) for x in sys.argv[4].split(",")],
         float(sys.argv[5]) if len(sys.argv) > 5 else LR)
