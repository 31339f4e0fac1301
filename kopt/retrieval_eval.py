"""Retrieval evals: does the index find the code or note that answers an engineer's question?

A gold set (evals/retrieval/gold.yaml) pairs questions with where their answer lives: a corpus, a
path, a symbol and a line range at a pinned compiler commit. A question may list several golds;
any one of them answers it. Each retrieval mode is scored at two levels:

- file: a hit's path is a gold path;
- symbol: also the hit's lines overlap the gold lines, or its symbol is the gold symbol.

Scores are recall@1/5/10, MRR and nDCG@k, computed with llama-index's HitRate / MRR / NDCG on
the ranked hits, where the first hit that answers the question is the one relevant item (later
chunks of the same file are not counted twice, so nDCG stays within [0, 1]).

Questions fall into two fixed halves by a hash of their id (split_of): `dev`, which tuning may look
at question by question, and `test`, which is only ever reported in aggregate, so a figure on `test`
is not inflated by choices made while looking at its misses. A gold file may instead declare
`split: dev` at its top: questions written later, only to tune on, never move the test half.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.evaluation.retrieval.metrics import MRR, NDCG, HitRate

from kopt.errors import KoptError

CATEGORIES = ("symptom", "mechanism", "option", "error", "cross-stage")  # cross-stage: needs two or more compiler stages
LEVELS = ("file", "symbol")
RECALL_AT = (1, 5, 10)
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Gold:
    corpus: str
    path: str
    symbol: str
    lines: tuple[int, int]


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    category: str
    uses_identifiers: bool
    gold: tuple[Gold, ...]
    split: str


def split_of(question_id: str) -> str:
    """The half a question belongs to: stable across runs, machines and edits of other questions."""
    return SPLITS[int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2]


def in_split(questions: Sequence[Question], split: str) -> list[Question]:
    """The questions of one half ('dev' or 'test'), or all of them ('all')."""
    if split not in (*SPLITS, "all"):
        raise KoptError(f"unknown split {split!r}; use dev, test or all")
    return [q for q in questions if split == "all" or q.split == split]


def load_gold(path: Path) -> tuple[dict[str, Any], list[Question]]:
    """Read and check a gold file; a malformed entry is a KoptError naming the file, question and field."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise KoptError(f"{path}: gold file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise KoptError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise KoptError(f"{path}: expected a mapping with a 'questions' list")
    whole_split = doc.get("split")
    if whole_split not in (None, *SPLITS):
        raise KoptError(f"{path}: field 'split' is {whole_split!r}; expected one of {', '.join(SPLITS)} (or none)")
    questions, seen = [], set()
    for n, entry in enumerate(doc["questions"]):
        where = f"{path}: question {entry.get('id', f'#{n + 1}') if isinstance(entry, dict) else f'#{n + 1}'}"
        question = _parse_question(entry, where, whole_split)
        if question.id in seen:
            raise KoptError(f"{where}: duplicate id")
        seen.add(question.id)
        questions.append(question)
    return doc.get("pins") or {}, questions


def _parse_question(entry: object, where: str, whole_split: str | None) -> Question:
    if not isinstance(entry, dict):
        raise KoptError(f"{where}: expected a mapping")
    for key, kind in (("id", str), ("question", str), ("category", str), ("uses_identifiers", bool), ("gold", list)):
        if not isinstance(entry.get(key), kind):
            raise KoptError(f"{where}: field '{key}' missing or not a {kind.__name__}")
    if entry["category"] not in CATEGORIES:
        raise KoptError(f"{where}: field 'category' is {entry['category']!r}; expected one of {', '.join(CATEGORIES)}")
    if not entry["gold"]:
        raise KoptError(f"{where}: field 'gold' is empty")
    golds = []
    for g in entry["gold"]:
        if not isinstance(g, dict) or not all(isinstance(g.get(k), str) and g[k] for k in ("corpus", "path", "symbol")):
            raise KoptError(f"{where}: each gold needs non-empty 'corpus', 'path' and 'symbol'")
        lines = g.get("lines")
        if not (isinstance(lines, list) and len(lines) == 2 and all(isinstance(x, int) for x in lines)
                and 1 <= lines[0] <= lines[1]):
            raise KoptError(f"{where}: gold {g['path']}: field 'lines' must be [start, end] with 1 <= start <= end")
        golds.append(Gold(g["corpus"], g["path"], g["symbol"], (lines[0], lines[1])))
    return Question(entry["id"], entry["question"], entry["category"], entry["uses_identifiers"], tuple(golds),
                    whole_split or split_of(entry["id"]))


def _same_path(a: str, b: str) -> bool:
    """Paths match when one is the other, or ends with it at a folder boundary (relative vs rooted)."""
    a, b = a.strip("/"), b.strip("/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _last_name(symbol: str) -> str:
    return re.split(r"::|\.", symbol)[-1]


def hit_answers(gold: Gold, meta: dict[str, Any], level: str) -> bool:
    """Whether one hit (its metadata) answers one gold at the given level."""
    if meta.get("corpus") not in (None, gold.corpus) or not _same_path(str(meta.get("path", "")), gold.path):
        return False
    if level == "file":
        return True
    start, end = meta.get("start_line"), meta.get("end_line")
    if isinstance(start, int) and isinstance(end, int) and start <= gold.lines[1] and end >= gold.lines[0]:
        return True
    names = {str(meta.get(k)) for k in ("symbol", "qualname") if meta.get(k)}
    return gold.symbol in names or _last_name(gold.symbol) in {_last_name(n) for n in names}


def first_rank(question: Question, metas: Sequence[dict[str, Any]], level: str) -> int | None:
    """1-based rank of the first hit that answers the question, or None."""
    for rank, meta in enumerate(metas, start=1):
        if any(hit_answers(g, meta, level) for g in question.gold):
            return rank
    return None


def ranking_scores(rank: int | None, k: int) -> dict[str, float]:
    """recall@1/5/10, MRR and nDCG@k for one question whose answer sits at `rank` (None: not found)."""
    retrieved = [f"miss-{i}" for i in range(1, k + 1)]
    if rank is not None and rank <= k:
        retrieved[rank - 1] = "answer"
    expected = ["answer"]
    scores = {f"recall@{n}": HitRate().compute(expected_ids=expected, retrieved_ids=retrieved[:n]).score
              for n in RECALL_AT if n <= k}
    scores["mrr"] = MRR().compute(expected_ids=expected, retrieved_ids=retrieved).score
    scores[f"ndcg@{k}"] = NDCG().compute(expected_ids=expected, retrieved_ids=retrieved).score
    return scores


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]} if rows else {}


def mrr_interval(reciprocal_ranks: Sequence[float], resamples: int = 2000, seed: int = 0) -> list[float]:
    """95% bootstrap interval of the MRR over questions: how far a figure on this few questions moves by chance.

    With 50 questions it spans about +-0.1, so a change of 0.01-0.02 (one question) is not evidence.
    """
    if not reciprocal_ranks:
        return []
    rng, n = random.Random(seed), len(reciprocal_ranks)
    means = sorted(sum(rng.choices(reciprocal_ranks, k=n)) / n for _ in range(resamples))
    return [round(means[int(0.025 * resamples)], 3), round(means[int(0.975 * resamples) - 1], 3)]


def _scores(rows: list[dict[str, Any]], level: str, k: int) -> dict[str, Any]:
    per_question = [ranking_scores(r[f"{level}_rank"], k) for r in rows]
    return {**_mean(per_question), "mrr_ci95": mrr_interval([q["mrr"] for q in per_question])}


Search = Callable[[str, str], Sequence[Any]]  # (question, mode) -> hits with .meta (and .cite())


def evaluate(questions: Sequence[Question], search: Search, modes: Sequence[str], k: int = 10,
             on_progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run every question through every mode; return metrics per mode and level, and the misses."""
    report: dict[str, Any] = {"questions": len(questions), "k": k, "modes": {}}
    for mode in modes:
        if questions:
            search(questions[0].question, mode)  # warm-up: model loads and caches do not count as query time
        per_question, seconds = [], 0.0
        for q in questions:
            started = time.perf_counter()
            hits = list(search(q.question, mode))[:k]
            seconds += time.perf_counter() - started
            metas = [dict(h.meta) for h in hits]
            per_question.append({
                "id": q.id, "split": q.split, "question": q.question, "category": q.category,
                "uses_identifiers": q.uses_identifiers,
                "file_rank": first_rank(q, metas, "file"), "symbol_rank": first_rank(q, metas, "symbol"),
                "top": [_cite(h) for h in hits[:3]],
            })
            if on_progress:
                on_progress()
        report["modes"][mode] = {
            **{level: _scores(per_question, level, k) for level in LEVELS},
            "by_split": {
                split: {level: _scores([r for r in per_question if r["split"] == split], level, k) for level in LEVELS}
                for split in SPLITS if any(r["split"] == split for r in per_question)
            },
            "by_wording": {
                wording: _mean([ranking_scores(r["file_rank"], k) for r in per_question
                                if r["uses_identifiers"] == (wording == "identifiers")])
                for wording in ("identifiers", "plain")
            },
            "mean_query_ms": round(1000 * seconds / max(len(questions), 1), 1),
            "per_question": per_question,
            "misses": {level: [r["id"] for r in per_question if r[f"{level}_rank"] is None] for level in LEVELS},
        }
    return report


def _cite(hit: Any) -> str:
    cite = getattr(hit, "cite", None)
    if callable(cite):
        return str(cite())
    meta = hit.meta
    return f"{meta.get('path')}:{meta.get('start_line')}-{meta.get('end_line')}"
