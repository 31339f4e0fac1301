"""The learned ranker (mode hybrid+ltr, kopt's default order): boosted trees reorder the hybrid, sparse and dense hits.

Why: hybrid adds its retrievers' normalised scores with fixed weights, so a signal counts the same whether or not the
others are sure. Trees over what each retriever says about a candidate (its scores and ranks in three lists, its kind,
place and length, how many of the question's words its names, path and text hold) and the question's shape learn when
to trust which. They were fitted on the blind questions already looked at (evals/retrieval/ltr/make.py `fit`) and ship
as plain arrays in models/ranker.json, read with numpy: no pickle, no scikit-learn at search time.

What they are known to do (evals/retrieval/README.md), in file MRR:
- the first order (1 x the probability, no file spreading): +0.020 over hybrid pooled on four unread blind sets, its
  gain on the files blind writers ask about; -0.03 on holdout.yaml's style;
- this order (0.5 x, spread over files): +0.012 [+0.001, +0.022] over the first on 270 fresh questions in
  holdout.yaml's style, where it equals hybrid (+0.000); on the looked-at blind sets about the usual files it keeps
  most of the first order's gain (+0.015 to +0.045 over hybrid).

`--mode hybrid` keeps the fused order.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

from kopt.errors import KoptError
from kopt.index.hits import Hit
from kopt.index.tokenize import tokens

TREES = Path(__file__).parent / "models" / "ranker.json"
DEPTH = 50  # candidates per list: the hybrid, sparse and dense top DEPTH
# score = hybrid score / best hybrid score + WEIGHT x the trees' probability. 1.0 (leave-one-set-out's choice) lost 0.02
# on questions about files no training question asks about; 0.5 keeps the gain elsewhere (README, "A gentler order").
WEIGHT = 0.5
KINDS = ("function", "class", "pass", "td_record", "mlir_test", "doc", "code", "pass_note", "pattern")
LANGUAGES = ("cpp", "python", "mlir", "tablegen", "markdown")
CORPORA = ("triton", "triton-ascend", "passes", "patterns")
PLACES = {"test": ("test/", "/test/", "unittest/"), "include": ("include/",), "front_end": ("python/triton/language/",),
          "third_party": ("third_party/",), "docs": ("docs/",), "runtime": ("python/triton/runtime/",)}
FEATURES = (["hybrid", "hybrid_rank", "sparse", "sparse_rank", "cosine", "cosine_gap", "dense_rank", "in_lists",
             "lines", "same_file", "words_in_names", "words_in_path", "words_in_text", "header"]
            + [f"kind_{k}" for k in KINDS] + [f"language_{x}" for x in LANGUAGES] + [f"corpus_{c}" for c in CORPORA]
            + [f"place_{p}" for p in PLACES]
            + ["query_words", "about_ir", "about_lowering", "about_amd", "quotes_message"])


def candidates(index, query: str, corpus=None, filters: dict | None = None) -> tuple[list[Hit], list[list[float]]]:
    """The union of the three top-DEPTH lists, in hybrid order first, with one feature row per candidate."""
    from kopt.index.search import _QUOTED, _query_shape

    lists = {mode: index.search(query, corpus=corpus, k=DEPTH, mode=mode, filters=filters)
             for mode in ("hybrid", "sparse", "dense")}
    hits: dict[tuple, Hit] = {}
    for found in lists.values():
        for h in found:
            hits.setdefault(h.key, h)
    ranks = {mode: {h.key: (i, h.score) for i, h in enumerate(found)} for mode, found in lists.items()}
    best = {mode: max((h.score for h in found), default=0.0) or 1.0 for mode, found in lists.items()}
    want = set(tokens(query))
    about_ir, about_lowering, _, about_amd, _, _ = _query_shape(query)
    asked = [math.log1p(len(want)), float(about_ir), float(about_lowering), float(about_amd),
             float(bool(_QUOTED.search(query)))]
    per_file: dict[str, int] = {}
    for h in hits.values():
        per_file[h.chunk.path] = per_file.get(h.chunk.path, 0) + 1
    rows = []
    for key, h in hits.items():
        c = h.chunk
        (hr, hs), (sr, ss), (dr, ds) = (ranks[m].get(key, (DEPTH, None)) for m in ("hybrid", "sparse", "dense"))
        names = set(tokens(" ".join([c.symbol, c.qualname, *c.symbols])))
        row = [hs / best["hybrid"] if hs is not None else 0.0, math.log1p(hr),
               ss / best["sparse"] if ss is not None else 0.0, math.log1p(sr),
               ds if ds is not None else 0.0, best["dense"] - ds if ds is not None else 1.0, math.log1p(dr),
               sum(key in ranks[m] for m in ranks), math.log1p((c.end_line or 0) - (c.start_line or 0)),
               per_file[c.path], _share(want, names), _share(want, set(tokens(c.path))),
               _share(want, set(tokens(h.text))),
               float(c.path.endswith((".h", ".hpp", ".td", ".pyi")))]
        row += [float(c.kind == k) for k in KINDS] + [float(c.language == x) for x in LANGUAGES]
        row += [float(c.corpus.removesuffix("-pkg") == n) for n in CORPORA]
        row += [float(any(m in c.path or c.path.startswith(m) for m in marks)) for marks in PLACES.values()]
        rows.append(row + asked)
    return list(hits.values()), rows


def _share(want: set[str], have: set[str]) -> float:
    return len(want & have) / len(want) if want else 0.0


class Trees:
    """Boosted binary trees as flat arrays: a node goes left when its feature is <= its threshold."""

    def __init__(self, doc: dict):
        import numpy as np

        if doc.get("features") != FEATURES:
            raise KoptError(f"{TREES} was fitted on other features than kopt computes",
                            hint="refit it: python evals/retrieval/ltr/make.py fit")
        self.baseline = float(doc["baseline"])
        self.roots = np.array(doc["roots"], dtype=np.int64)
        self.feature = np.array(doc["feature"], dtype=np.int64)
        self.threshold = np.array(doc["threshold"], dtype=np.float64)
        self.left = np.array(doc["left"], dtype=np.int64)
        self.right = np.array(doc["right"], dtype=np.int64)
        self.value = np.array(doc["value"], dtype=np.float64)
        self.leaf = np.array(doc["leaf"], dtype=bool)

    def probability(self, rows: list[list[float]]):
        """P(the candidate's file answers the question) for each feature row."""
        import numpy as np

        x = np.asarray(rows, dtype=np.float32).astype(np.float64).reshape(-1, len(FEATURES))  # as fitted
        node = np.repeat(self.roots[None, :], len(x), axis=0)  # (rows, trees): every row walks every tree at once
        at = np.arange(len(x))[:, None]
        while not self.leaf[node].all():
            go_left = x[at, self.feature[node]] <= self.threshold[node]
            node = np.where(self.leaf[node], node, np.where(go_left, self.left[node], self.right[node]))
        raw = self.baseline + self.value[node].sum(axis=1)
        return 1.0 / (1.0 + np.exp(-raw))


@cache
def load_trees(path: Path = TREES) -> Trees:
    if not path.is_file():
        raise KoptError(f"the learned ranker's trees are missing ({path})",
                        hint="reinstall kopt, or search with --mode hybrid")
    return Trees(json.loads(path.read_text()))


def rank(index, query: str, corpus=None, k: int = 10, filters: dict | None = None) -> list[Hit]:
    """The candidates by hybrid score / best + WEIGHT x the trees' probability (ties keep hybrid order), then spread
    over files as hybrid is: the trees score a file, so without it one file's chunks fill the top."""
    from kopt.index.search import _spread_files

    hits, rows = candidates(index, query, corpus, filters)
    if not hits:
        return []
    probs = load_trees().probability(rows)
    keys = [row[0] + WEIGHT * float(p) for row, p in zip(rows, probs)]
    ranked = sorted(range(len(hits)), key=lambda i: (-keys[i], i))
    return _spread_files([Hit(round(keys[i], 4), hits[i].text, hits[i].chunk) for i in ranked])[:k]
