"""Train the static query student on the CPU (evals/retrieval/README.md, "A distilled query encoder", amendment).

One vector per vocabulary token of the MiniLM's tokenizer; a query's vector is the normalised sum of its tokens'
vectors. Each starts as the teacher's mean-pooled (unnormalised) vector of that token alone and is trained with
1 - cosine to the teacher's vectors of the pairs-file questions, plus one random span of 3+ words of each. The first
1000 questions of prep.py's order (and their spans) are held out; the held-out cosine is what settings are chosen on.
The table is written as int8 with a float32 scale per row (safetensors: `tokens`, `scale`).

    .venv/bin/python evals/retrieval/distill/static.py OUT.safetensors [--epochs 8] [--lr 1e-2]   # ~10 min, 2 cores
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
from prep import TOKENS, questions, span
from train import HELD_OUT, MiniLM

from kopt.index.embed import DEFAULT_MODEL, model_dir

BATCH = 256


def pooled(model: MiniLM, layers: list[dict], rows: list[list[int]], normalise: bool) -> torch.Tensor:
    """The teacher's mean-pooled vectors of token rows, batched by length."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    out = torch.zeros(len(rows), model.w["embeddings.word_embeddings.weight"].shape[1])
    with torch.no_grad():
        for b in range(0, len(order), 512):
            idx = order[b:b + 512]
            n = max(len(rows[i]) for i in idx)
            ids = torch.zeros(len(idx), n, dtype=torch.long)
            mask = torch.zeros(len(idx), n, dtype=torch.bool)
            for j, i in enumerate(idx):
                ids[j, : len(rows[i])] = torch.tensor(rows[i])
                mask[j, : len(rows[i])] = True
            out[idx] = model.encode(ids, mask, layers, normalise)
    return out


def student(table: torch.Tensor, rows: list[list[int]]) -> torch.Tensor:
    flat = torch.tensor([t for r in rows for t in r])
    offsets = torch.tensor([0] + [len(r) for r in rows[:-1]]).cumsum(0)
    return F.normalize(F.embedding_bag(flat, table, offsets, mode="sum"), dim=-1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--teacher", type=Path, help="keep the teacher's vectors in this file and reuse them (~3 min each)")
    args = ap.parse_args()
    torch.manual_seed(0)
    base = model_dir(DEFAULT_MODEL)
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    model = MiniLM({k: v.float() for k, v in load_file(str(base / "model.safetensors")).items()},
                   {"num_attention_heads": 12, "layer_norm_eps": 1e-12})
    layers = [model.layer_params(i) for i in range(6)]

    def encode(text: str) -> list[int]:
        ids = tokenizer.encode(text).ids
        return ids if len(ids) <= TOKENS else ids[: TOKENS - 1] + ids[-1:]

    draw = random.Random(1)
    texts = questions()
    spans = [span(t, draw) for t in texts]
    rows = [encode(t) for t in texts + spans]
    started = time.time()
    if args.teacher and args.teacher.is_file():
        target, table = torch.load(args.teacher)
    else:
        target = pooled(model, layers, rows, normalise=True)
        vocab = model.w["embeddings.word_embeddings.weight"].shape[0]
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        table = pooled(model, layers, [[cls, v, sep] for v in range(vocab)], normalise=False)
        if args.teacher:
            torch.save((target, table), args.teacher)
    print(f"{len(texts)} questions and {len(spans)} spans; teacher vectors in {time.time() - started:.0f} s", flush=True)

    n = len(texts)
    held = list(range(HELD_OUT)) + list(range(n, n + HELD_OUT))
    train = list(range(HELD_OUT, n)) + list(range(n + HELD_OUT, 2 * n))

    def held_out() -> str:
        with torch.no_grad():
            cos = [(student(table, [rows[i] for i in part]) * target[part]).sum(-1) for part in (held[:HELD_OUT], held[HELD_OUT:])]
        return " ".join(f"{name} mean {c.mean():.4f} p5 {c.kthvalue(HELD_OUT // 20).values:.4f}"
                        for name, c in zip(("questions", "spans"), cos))

    print("start:", held_out(), flush=True)
    table.requires_grad_(True)
    opt = torch.optim.Adam([table], lr=args.lr)
    steps = args.epochs * (len(train) // BATCH)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.05)
    order = torch.Generator().manual_seed(0)
    for epoch in range(args.epochs):
        perm = [train[i] for i in torch.randperm(len(train), generator=order)]
        for b in range(0, len(perm) - BATCH + 1, BATCH):
            idx = perm[b:b + BATCH]
            loss = (1 - (student(table, [rows[i] for i in idx]) * target[idx]).sum(-1)).mean()
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"epoch {epoch + 1}: {held_out()} ({time.time() - started:.0f} s)", flush=True)
    table = table.detach()
    scale = table.abs().amax(1).clamp_min(1e-12) / 127
    quantised = torch.round(table / scale[:, None]).to(torch.int8)
    with torch.no_grad():
        dequantised = quantised.float() * scale[:, None]
        cos = (student(dequantised, [rows[i] for i in held[:HELD_OUT]]) * target[held[:HELD_OUT]]).sum(-1)
    print(f"int8: held-out questions mean {cos.mean():.4f}")
    save_file({"tokens": quantised.contiguous(), "scale": scale.float().contiguous()}, str(args.out),
              metadata={"teacher": DEFAULT_MODEL, "max_tokens": str(TOKENS)})
    print(args.out)


if __name__ == "__main__":
    main()
