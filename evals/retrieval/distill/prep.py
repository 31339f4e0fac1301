"""Data for the distilled query encoder (evals/retrieval/README.md, "A distilled query encoder").

Every expansion question of the pairs files (text no eval set holds), then a random span of 3+ words of each (users
also type short queries), tokenized as kopt's query encoder does (64 tokens at most), with the MiniLM's weights in
fp16 and only the vocabulary rows those texts use: one file, small enough to carry to a machine that has torch alone.

    .venv/bin/python evals/retrieval/distill/prep.py DATA.pt
    .venv/bin/python evals/retrieval/distill/train.py DATA.pt RESULTS_DIR 10 0,2,4 3e-3   # the shipped student, ~30 min
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from kopt.index.embed import DEFAULT_MODEL, model_dir

PAIRS = Path(__file__).resolve().parents[1] / "pairs"
FILES = ("doc2query.jsonl", "doc2query-kernel.jsonl", "engineer.jsonl")
TOKENS = 64


def questions() -> list[str]:
    texts = sorted({" ".join(json.loads(line)["query"].split()) for f in FILES for line in (PAIRS / f).open()})
    random.Random(0).shuffle(texts)  # train.py holds out the first 1000
    return texts


def span(text: str, draw: random.Random) -> str:
    """A random run of at least three of the question's words (the question itself when it has four or fewer)."""
    words = text.split()
    if len(words) <= 4:
        return text
    size = draw.randint(3, len(words) - 1)
    start = draw.randint(0, len(words) - size)
    return " ".join(words[start:start + size])


def main(out: Path) -> None:
    base = model_dir(DEFAULT_MODEL)
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    texts = questions()
    draw = random.Random(1)
    texts += [span(t, draw) for t in texts]  # train.py holds out the first 1000 of each half
    rows = []
    for text in texts:
        ids = tokenizer.encode(text).ids
        rows.append(ids if len(ids) <= TOKENS else ids[: TOKENS - 1] + ids[-1:])  # keep [SEP], as the encoder does
    vocab = sorted({i for ids in rows for i in ids})
    local = {v: k for k, v in enumerate(vocab)}
    ids = torch.zeros(len(rows), TOKENS, dtype=torch.int16)
    mask = torch.zeros(len(rows), TOKENS, dtype=torch.bool)
    for n, row in enumerate(rows):
        ids[n, : len(row)] = torch.tensor([local[i] for i in row])
        mask[n, : len(row)] = True
    weights = load_file(str(base / "model.safetensors"))
    weights["embeddings.word_embeddings.weight"] = weights["embeddings.word_embeddings.weight"][vocab].clone()
    weights = {k: v.half() if v.dtype == torch.float32 else v for k, v in weights.items()}
    config = json.loads((base / "config.json").read_text())
    torch.save({"ids": ids, "mask": mask, "weights": weights, "config": config, "questions": len(texts) // 2}, out)
    print(f"{len(texts) // 2} questions and as many spans, {len(vocab)} vocabulary rows -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
