"""Document expansion (issue 19): questions known to point at a chunk, added to the text BM25 indexes for it.

The doc2query idea: engineers ask in words the code does not use. The pair rows in evals/retrieval/pairs (mined
from the sources by ingest/pairs.py, and questions an LLM wrote per chunk by ingest/doc2query.py; never an eval
set) say in such words what a chunk answers. They join the chunk's BM25 document as a second field (each word
weighing EXPANSION_WEIGHT of a code word), so BM25 meets them, and their mean vector is the chunk's second dense
vector (ingest/pipeline.py); the chunk's own vector, the stored text, the payload and the citations stay the chunk's.
A row points at a chunk by (corpus, path, lines), as pairs.py's `_ref` writes it, so rows mined at another commit
only reach chunks whose lines did not move. A package corpus (triton-pkg) holds some of its checkout's files under
other paths: its chunks take the questions of the same file and lines in the checkout.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from kopt.errors import KoptError
from kopt.index.search import CHECKOUT_OF, checkout_path

# The miners a pairs folder stands for. doc2query: measured on tune.yaml + gold.yaml dev (evals/RESULTS.md, "Document
# expansion"); the mined pairs (lit IR, TableGen text and notes on pass classes, commit messages, doc comments the chunk
# holds already) lifted BM25 but lowered hybrid, alone and beside doc2query. doc2query-kernel (questions in a kernel
# author's words): decided on a fresh blind set as fixed beforehand, file MRR 0.622 -> 0.672 (paired +0.050 [+0.010,
# +0.094]), after holdout.yaml +0.042 and blind-2026-12 +0.022; the tuned-on dev sets moved -0.013 and -0.002.
DEFAULT_MINERS = ("doc2query", "doc2query-kernel")
MAX_QUERIES = 8      # per chunk: a widely changed helper collects dozens of commit messages
MAX_CHARS = 1200     # per chunk, so an expanded chunk's BM25 length stays near its code's
# A question's word counts this much of a word of the chunk's own text in BM25 (a field weight). Hybrid file MRR
# over the 124 tuning questions: 0.25 +0.040 (paired 95% CI +0.011..+0.073), 0.5 +0.028, 1.0 +0.028.
EXPANSION_WEIGHT = 0.25
EXPANDED_CORPORA = ("triton", "triton-ascend", "triton-pkg", "triton-ascend-pkg")  # the pairs' corpora, their packages


def committed_pairs() -> Path:
    """The pairs committed beside kopt's corpora (a source checkout has them; an installed wheel does not)."""
    from kopt.ingest.manifest import corpora_dir

    return corpora_dir().parent / "evals" / "retrieval" / "pairs"


@dataclass
class Expansion:
    """Per chunk (corpus, path, start, end): the text appended to its BM25 document."""

    files: list[str]
    digest: str
    texts: dict[tuple, str] = field(default_factory=dict)

    def text_for(self, corpus: str, path: str, start: int, end: int) -> str:
        """The chunk's questions; a package corpus's file is looked up as its checkout names it."""
        if corpus in CHECKOUT_OF:
            corpus, path = CHECKOUT_OF[corpus], checkout_path(corpus, path) or ""
        return self.texts.get((corpus, path, start, end), "")

    def describe(self, chunks: int) -> dict:
        """What the catalog records, so a re-ingest with other pairs is a new build and `kopt index list` says so."""
        return {"files": self.files, "digest": self.digest, "chunks": chunks}


def miner_files(folder: Path) -> list[Path]:
    """The DEFAULT_MINERS files a pairs folder holds."""
    return [folder / f"{miner}.jsonl" for miner in DEFAULT_MINERS if (folder / f"{miner}.jsonl").is_file()]


def pair_files(paths: list[Path]) -> list[Path]:
    """The JSONL files the given paths stand for: a folder gives its DEFAULT_MINERS files that exist, a file itself."""
    files = []
    for path in paths:
        if path.is_dir():
            found = miner_files(path)
            if not found:
                raise KoptError(f"{path}: no pair files ({', '.join(m + '.jsonl' for m in DEFAULT_MINERS)})")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise KoptError(f"{path}: no such pairs file or folder (--expand)")
    return list(dict.fromkeys(files))


def load_expansion(paths: list[Path], max_queries: int = MAX_QUERIES, max_chars: int = MAX_CHARS) -> Expansion:
    """The expansion the pair files give: per chunk, queries taken in turn from each file, up to the caps."""
    files = pair_files(paths)
    digest = hashlib.sha256(f"{max_queries}|{max_chars}|{EXPANSION_WEIGHT}".encode())  # all change the BM25 vectors
    per_file: list[dict[tuple, list[str]]] = []
    for f in files:
        data = f.read_bytes()
        digest.update(f.name.encode() + b"\0" + data)
        queries: dict[tuple, list[str]] = {}
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            try:
                row = json.loads(line)
                pos = row["positive"]
                key = (pos["corpus"], pos["path"], int(pos["lines"][0]), int(pos["lines"][1]))
                queries.setdefault(key, []).append(" ".join(str(row["query"]).split()))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise KoptError(f"{f}:{n}: not a pair row ({type(exc).__name__}: {exc})") from exc
        per_file.append(queries)
    texts = {key: _capped([q.get(key, []) for q in per_file], max_queries, max_chars)
             for key in sorted({k for q in per_file for k in q})}
    return Expansion([f.name for f in files], digest.hexdigest()[:12], texts)


def _capped(lists: list[list[str]], max_queries: int, max_chars: int) -> str:
    """Queries taken in turn from each source (so no one miner fills the budget), distinct, within the caps."""
    taken: list[str] = []
    size = 0
    for i in range(max(map(len, lists))):
        for queries in lists:
            if i >= len(queries) or queries[i] in taken or len(taken) >= max_queries or size >= max_chars:
                continue
            query = queries[i][: max_chars - size]
            taken.append(query)
            size += len(query) + 1
    return "\n".join(taken)
