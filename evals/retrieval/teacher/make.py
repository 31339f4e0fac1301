"""The teacher's data for the distilled reranker (evals/retrieval/README.md, "A reranker distilled ..."):

    python evals/retrieval/teacher/make.py sample                       # -> questions.jsonl (committed)
    KOPT_HOME=H python evals/retrieval/teacher/make.py requests DIR      # one exchange request per question
    KOPT_HOME=H python evals/retrieval/teacher/make.py labels DIR        # -> labels.jsonl (committed)

H is an index built with --no-expand; DIR the exchange folder the replies are written into. `labels` keeps,
per question, the 20 candidates (corpus, path, start line) in hybrid order and the relevance the reply gave each
(0 where it gave none).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
RETRIEVAL = HERE.parent
SEED, COUNT = 20261203, 240
CORPORA = ["triton", "triton-ascend", "passes", "patterns"]


def held_out_files() -> set[str]:
    """Every gold file of the held-out sets: no training question may be about one."""
    files = set()
    for name in ("holdout.yaml", "blind-2026-12.yaml"):
        for q in yaml.safe_load((RETRIEVAL / name).read_text())["questions"]:
            files |= {g["path"] for g in q["gold"]}
    return files


def sample() -> None:
    held = held_out_files()
    rows = [json.loads(line) for line in (RETRIEVAL / "pairs" / "doc2query.jsonl").read_text().splitlines() if line]
    rows = [r for r in rows if r["positive"]["path"] not in held]
    rng = random.Random(SEED)
    rng.shuffle(rows)
    by_corpus: dict[str, list[dict]] = {}
    seen = set()
    for r in rows:
        key = (r["positive"]["corpus"], r["positive"]["path"], r["positive"]["lines"][0])
        if key not in seen:
            seen.add(key)
            by_corpus.setdefault(r["positive"]["corpus"], []).append(r)
    total = sum(len(v) for v in by_corpus.values())
    picked = []
    for items in (by_corpus[c] for c in sorted(by_corpus)):
        picked += items[: round(COUNT * len(items) / total)]
    rng.shuffle(picked)
    (HERE / "questions.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in picked))
    counts = {c: sum(p["positive"]["corpus"] == c for p in picked) for c in by_corpus}
    print(f"{len(picked)} questions: {counts}")


def _questions() -> list[dict]:
    return [json.loads(line) for line in (HERE / "questions.jsonl").read_text().splitlines() if line]


def _llm(folder: str):
    from kopt.exchange_llm import ExchangeLLM

    return ExchangeLLM(exchange_dir=str(Path(folder).resolve()), model="exchange")


def requests(folder: str) -> None:
    """Write one request per question; candidates.jsonl in the folder keeps each question's request id and its
    candidates in the order the request numbers them."""
    import re

    from kopt.config import load_settings
    from kopt.index import open_index
    from kopt.index.llm_rerank import rerank

    llm, rows = _llm(folder), []
    index = open_index(load_settings())
    try:
        for q in _questions():
            hits = index.search(q["query"], corpus=CORPORA, k=20, mode="hybrid")
            _, reason = rerank(llm, q["query"], hits)
            found = re.search(r"([0-9a-f]{16})\.request\.", reason or "")
            rows.append({"query": q["query"], "request": found.group(1) if found else None,
                         "candidates": [[h.chunk.corpus, h.chunk.path, h.chunk.start_line] for h in hits]})
    finally:
        index.close()
    (Path(folder) / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{sum(r['request'] is not None for r in rows)} of {len(rows)} requests written to {folder}")


def labels(folder: str) -> None:
    """Each replied question's candidates with the relevance its reply gave them (0 where it gave none)."""
    from kopt.index.llm_rerank import parse_choices

    out, missing = [], 0
    for row in map(json.loads, (Path(folder) / "candidates.jsonl").read_text().splitlines()):
        reply = Path(folder) / f"{row['request']}.reply.md"
        if not reply.is_file():
            missing += 1
            continue
        first, _, text = reply.read_text().partition("\n")
        docs, rel = parse_choices(text, len(row["candidates"]))
        given = dict(zip(docs, rel))
        out.append({"query": row["query"], "model": first.removeprefix("model:").strip(),
                    "candidates": [[*c, given.get(n, 0.0)] for n, c in enumerate(row["candidates"], start=1)]})
    (HERE / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
    print(f"{len(out)} labelled, {missing} without a reply")


if __name__ == "__main__":
    {"sample": sample, "requests": requests, "labels": labels}[sys.argv[1]](*sys.argv[2:])
