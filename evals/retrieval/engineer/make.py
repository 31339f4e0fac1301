"""Training questions in engineers' words (evals/retrieval/README.md, "Questions in engineers' words ..."):

    python evals/retrieval/engineer/make.py collect DIR    # the writers' t*.yaml -> questions.yaml (committed)
    python evals/retrieval/engineer/make.py pairs           # questions.yaml -> pairs/engineer.jsonl

The writers (fresh agents, brief BRIEF.md) read only the two source trees and gave each question's gold as a path
and a line range. `pairs` turns each gold into the chunk `kopt ingest` cuts that overlaps it most, so a row names
a chunk as every pairs file does; it needs the checkouts the manifests point at (or --triton/--ascend).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import yaml

from kopt.ingest.manifest import LANGUAGES, MAX_BYTES, load_manifest, resolve
from kopt.ingest.pipeline import chunk_file
from kopt.retrieval_eval import CATEGORIES

HERE = Path(__file__).resolve().parent
PAIRS = HERE.parent / "pairs" / "engineer.jsonl"
MODEL = "claude (subagent; name not asked)"


def collect(folder: Path) -> None:
    """Keep every well-formed question of the writers' files, in writer order; say what was dropped and why."""
    kept, dropped = [], Counter()
    for f in sorted(folder.glob("t*.yaml")):
        for q in yaml.safe_load(f.read_text()) or []:
            golds = q.get("gold") or []
            if not (q.get("question") and q.get("category") in CATEGORIES and golds
                    and all(g.get("corpus") in ("triton", "triton-ascend") and len(g.get("lines") or []) == 2
                            for g in golds)):
                dropped[f.stem] += 1
                continue
            kept.append({"id": q["id"], "question": " ".join(str(q["question"]).split()), "category": q["category"],
                         "uses_identifiers": bool(q.get("uses_identifiers")),
                         "gold": [{k: g[k] for k in ("corpus", "path", "symbol", "lines")} for g in golds]})
    header = ("# Training questions in engineers' words (issue 19): written 2026-12-04 by eight fresh agents that read\n"
              "# only Triton @7c56a5e4 and triton-ascend @eeb030e7 (brief: BRIEF.md). Training data, never an eval set.\n")
    (HERE / "questions.yaml").write_text(header + yaml.safe_dump(kept, sort_keys=False, allow_unicode=True, width=120))
    print(f"{len(kept)} questions kept, dropped per writer: {dict(dropped)}")


def _best_chunk(chunks, gold: dict):
    """The chunk sharing most lines with the gold range; the gold's own symbol, then the shorter chunk, on a tie."""
    first, last = gold["lines"]

    def score(c):
        overlap = min(last, c.end_line) - max(first, c.start_line) + 1
        named = gold["symbol"].split("::")[-1].split(".")[-1] in {c.symbol, (c.qualname or "").split("::")[-1]}
        return overlap, named, -(c.end_line - c.start_line)
    best = max(chunks, key=score, default=None)
    return best if best is not None and score(best)[0] > 0 else None


def pairs(roots: dict[str, Path | None]) -> None:
    questions = yaml.safe_load((HERE / "questions.yaml").read_text())
    sources = {name: resolve(load_manifest(name), root) for name, root in roots.items()}
    cache: dict[tuple, list] = {}
    rows, missed = [], Counter()
    for q in questions:
        for g in q["gold"]:
            source, rel = sources[g["corpus"]], g["path"]
            key = (g["corpus"], rel)
            if key not in cache:
                ok = rel in source.files and Path(rel).suffix.lower() in LANGUAGES and source.size(rel) <= MAX_BYTES
                cache[key] = chunk_file(rel, source.read(rel))[0] if ok else []
            chunk = _best_chunk(cache[key], g)
            if chunk is None:
                missed["file not in the corpus" if not cache[key] else "no chunk at those lines"] += 1
                continue
            row = {"query": q["question"], "source": "engineer", "model": MODEL, "id": q["id"],
                   "positive": {"corpus": g["corpus"], "path": rel, "symbol": chunk.qualname or chunk.symbol,
                                "lines": [chunk.start_line, chunk.end_line]}}
            if row not in rows:  # two gold ranges of one question in one chunk
                rows.append(row)
    PAIRS.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(f"{len(rows)} rows from {len(questions)} questions -> {PAIRS}; golds not placed: {dict(missed)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("collect").add_argument("folder", type=Path)
    p = sub.add_parser("pairs")
    p.add_argument("--triton", type=Path)
    p.add_argument("--ascend", type=Path)
    args = parser.parse_args(argv)
    if args.step == "collect":
        collect(args.folder)
    else:
        pairs({"triton": args.triton, "triton-ascend": args.ascend})
    return 0


if __name__ == "__main__":
    sys.exit(main())
