"""Distil the 6-layer MiniLM's question vectors into a few of its layers, in plain torch (a GPU machine here has no
sentence-transformers). The teacher's vectors are computed from the same weights. The student starts from the named
layers, with its embeddings frozen, and learns with 1 - cosine to the teacher as the loss. The student's layers are
saved in fp16 as RESULTS_DIR/student-<layers>-<steps>.pt.

Not shipped: a CPU prototype reached a held-out cosine of only 0.894 in 7 minutes (evals/RESULTS.md).

    python evals/retrieval/distill/train.py DATA.pt RESULTS_DIR STEPS LAYERS    # LAYERS e.g. 0,2,4
"""

from __future__ import annotations

import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HELD_OUT, BATCH, LR = 1000, 256, 2e-4


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

    def encode(self, ids, mask, layers: list[dict]):
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for p in layers:
            x = self._layer(x, mask, p)
        m = mask.float()[..., None]
        return F.normalize((x * m).sum(1) / m.sum(1), dim=-1)


def main(data: str, out: str, steps: int, layers: list[int]) -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    d = torch.load(data)
    model = MiniLM({k: v.to(device).float() for k, v in d["weights"].items()}, d["config"])
    ids, mask = d["ids"].long().to(device), d["mask"].to(device)
    teacher = [model.layer_params(i) for i in range(d["config"]["num_hidden_layers"])]
    with torch.no_grad():
        target = torch.cat([model.encode(ids[i:i + 2048], mask[i:i + 2048], teacher) for i in range(0, len(ids), 2048)])
    student = [{k: v.clone().requires_grad_(True) for k, v in model.layer_params(i).items()} for i in layers]
    opt = torch.optim.AdamW([p for layer in student for p in layer.values()], lr=LR, weight_decay=0.0)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min((i + 1) / warm, 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps))))
    draw, started = torch.Generator().manual_seed(0), time.time()
    for step in range(steps):
        idx = torch.randint(HELD_OUT, len(ids), (BATCH,), generator=draw).to(device)
        m = mask[idx]
        n = int(m.sum(1).max())
        loss = (1 - (model.encode(ids[idx, :n], m[:, :n], student) * target[idx]).sum(-1)).mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 2000 == 0:
            print(f"step {step} loss {loss.item():.5f} {time.time() - started:.0f} s", flush=True)
    with torch.no_grad():
        cos = (model.encode(ids[:HELD_OUT], mask[:HELD_OUT], student) * target[:HELD_OUT]).sum(-1)
    print(f"held-out cosine mean {cos.mean():.4f} p5 {cos.kthvalue(HELD_OUT // 20).values:.4f} min {cos.min():.4f}")
    os.makedirs(out, exist_ok=True)
    name = os.path.join(out, f"student-{''.join(map(str, layers))}-{steps}.pt")
    torch.save({f"encoder.layer.{j}.{k}": v.detach().half().cpu() for j, p in enumerate(student) for k, v in p.items()}, name)
    print(name)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(x) for x in sys.argv[4].split(",")])
