"""The learned ranker's data, training and dev check (evals/retrieval/README.md, "A learned ranker ..."): trees
over what the retrievers already know about each candidate, reading no text but the question's words in it.
It lost to hybrid on dev (evals/RESULTS.md), so kopt does not ship it; this script reproduces the attempt.

    python evals/retrieval/ltr/make.py sample --expansion DIR     # DIR/doc2query.jsonl: without the 3000 questions
    KOPT_HOME=H python evals/retrieval/ltr/make.py features F.npz # one row per candidate of every question
    python evals/retrieval/ltr/make.py features F.npz --questions doc2query-kernel   # the kernel-voice run
    python evals/retrieval/ltr/make.py train F.npz MODEL          # the trees
    python evals/retrieval/ltr/make.py dev MODEL                  # tune.yaml and gold.yaml dev: hybrid and the orders

DIR is the doc2query expansion without the sampled questions; H an index whose triton and triton-ascend corpora
were ingested with `--expand DIR` (and passes, patterns). `dev`, and the kernel-voice run's features, use the index
kopt ships (KOPT_HOME unset): no expansion holds those questions.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path

from kopt.index.hits import Hit
from kopt.index.tokenize import tokens

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: evals.* as the tests import it
from evals.retrieval.teacher.make import held_out_files

DEPTH = 50  # candidates per list: the hybrid, sparse and dense top DEPTH
KINDS = ("function", "class", "pass", "td_record", "mlir_test", "doc", "code", "pass_note", "pattern")
LANGUAGES = ("cpp", "python", "mlir", "tablegen", "markdown")
CORPORA = ("triton", "triton-ascend", "passes", "patterns")
PLACES = {"test": ("test/", "/test/", "unittest/"), "include": ("include/",), "front_end": ("python/triton/language/",),
          "third_party": ("third_party/",), "docs": ("docs/",), "runtime": ("python/triton/runtime/",)}
FEATURES = (["hybrid", "hybrid_rank", "sparse", "sparse_rank", "cosine", "cosine_gap", "dense_rank", "in_lists",
             "lines", "same_file", "words_in_names", "words_in_path", "words_in_text", "header"]
            + [f"kind_{k}" for k in KINDS] + [f"language_{x}" for x in LANGUAGES] + [f"corpus_{c}" for c in CORPORA]
            + [f"place_{p}" for p in PLACES])


def candidates(index, query: str, corpus=None, filters: dict | None = None) -> tuple[list[Hit], list[list[float]]]:
    """The union of the three top-DEPTH lists, in hybrid order first, with one feature row per candidate."""
    lists = {mode: index.search(query, corpus=corpus, k=DEPTH, mode=mode, filters=filters)
             for mode in ("hybrid", "sparse", "dense")}
    hits: dict[tuple, Hit] = {}
    for found in lists.values():
        for h in found:
            hits.setdefault(h.key, h)
    ranks = {mode: {h.key: (i, h.score) for i, h in enumerate(found)} for mode, found in lists.items()}
    best = {mode: max((h.score for h in found), default=0.0) or 1.0 for mode, found in lists.items()}
    want = set(tokens(query))
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
               per_file[c.path], _share(want, names), _share(want, set(tokens(c.path))), _share(want, set(tokens(h.text))),
               float(c.path.endswith((".h", ".hpp", ".td", ".pyi")))]
        row += [float(c.kind == k) for k in KINDS] + [float(c.language == x) for x in LANGUAGES]
        row += [float(c.corpus.removesuffix("-pkg") == n) for n in CORPORA]
        row += [float(any(m in c.path or c.path.startswith(m) for m in marks)) for marks in PLACES.values()]
        rows.append(row)
    return list(hits.values()), rows


def _share(want: set[str], have: set[str]) -> float:
    return len(want & have) / len(want) if want else 0.0


HERE = Path(__file__).resolve().parent
RETRIEVAL = HERE.parent
SEED, COUNT = 20261204, 3000
PARAMS = {"max_depth": 3, "max_iter": 200, "learning_rate": 0.05}
WEIGHTS = (None, 0.3, 1.0)  # the orders dev chooses among: the trees alone, or hybrid / best + w x probability
DEV_CORPORA = ["triton", "passes", "patterns"]  # as `kopt eval retrieval` searches by default


def _rows(name: str = "doc2query") -> list[dict]:
    return [json.loads(line) for line in (RETRIEVAL / "pairs" / f"{name}.jsonl").read_text().splitlines() if line]


def _chunk(row: dict) -> tuple:
    p = row["positive"]
    return p["corpus"], p["path"], p["lines"][0]


def questions(name: str = "doc2query") -> list[dict]:
    """The 3000 questions of pairs/<name>.jsonl: one per chunk, none whose positive file is a held-out gold file
    (seeded, so the same every run)."""
    held = held_out_files()
    pool = [r for r in _rows(name) if r["positive"]["path"] not in held]
    random.Random(SEED).shuffle(pool)
    picked, seen = [], set()
    for r in pool:
        if _chunk(r) not in seen and len(picked) < COUNT:
            seen.add(_chunk(r))
            picked.append(r)
    return picked


def sample(expansion: Path) -> None:
    rows, asked = _rows(), {(r["query"], _chunk(r)) for r in questions()}
    kept = [r for r in rows if (r["query"], _chunk(r)) not in asked]
    expansion.mkdir(parents=True, exist_ok=True)
    (expansion / "doc2query.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
    print(f"{len(asked)} questions; expansion keeps {len(kept)} of {len(rows)} rows in {expansion}")


def features(out: Path, name: str) -> None:
    import numpy as np

    from kopt.config import load_settings
    from kopt.index import open_index

    # a question's label: any of its positives' files (a cross-stage engineer question has one per stage); the
    # engineer questions are few and several share a chunk, so all of them are used
    wanted: dict[str, set] = {}
    for q in (_rows(name) if name == "engineer" else questions(name)):
        wanted.setdefault(q["query"], set()).add((q["positive"]["corpus"], q["positive"]["path"]))
    index = open_index(load_settings())
    index.preload()
    xs, ys, groups, started = [], [], [], time.time()
    try:
        for n, (query, want) in enumerate(wanted.items()):
            hits, rows = candidates(index, query)
            xs += rows
            ys += [float((h.chunk.corpus, h.chunk.path) in want) for h in hits]
            groups += [n] * len(hits)
            if n % 250 == 0:
                print(f"{n} questions, {len(xs)} rows, {time.time() - started:.0f} s", flush=True)
    finally:
        index.close()
    np.savez_compressed(out, x=np.array(xs, dtype=np.float32), y=np.array(ys), group=np.array(groups))
    print(f"{n + 1} questions, {len(xs)} rows, {int(sum(ys))} positives -> {out}")


def train(data: Path, model_out: Path) -> None:
    import joblib
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    d = np.load(data)
    started = time.time()
    model = HistGradientBoostingClassifier(**PARAMS, random_state=SEED).fit(d["x"], d["y"])
    model_out.parent.mkdir(parents=True, exist_ok=True)
    joblib.dump(model, model_out)
    print(f"trained on {len(d['y'])} rows in {time.time() - started:.0f} s -> {model_out} ({model_out.stat().st_size} bytes)")


def order(index, query: str, model, weight: float | None, corpus: list[str], k: int = 10) -> list[Hit]:
    """The candidates by the trees' probability (weight None), or by hybrid score / best + weight x probability."""
    hits, rows = candidates(index, query, corpus)
    if not hits:
        return []
    probs = model.predict_proba(rows)[:, 1]
    if weight is None:
        keys = [float(p) for p in probs]
    else:
        keys = [row[0] + weight * float(p) for row, p in zip(rows, probs)]
    ranked = sorted(zip(keys, range(len(hits))), key=lambda kp: (-kp[0], kp[1]))
    return [Hit(round(key, 4), hits[i].text, hits[i].chunk) for key, i in ranked[:k]]


def dev(model_path: Path) -> None:
    import joblib

    from kopt.config import load_settings
    from kopt.index import open_index
    from kopt.retrieval_eval import evaluate, in_split, load_gold

    model = joblib.load(model_path)
    index = open_index(load_settings())
    index.preload()

    def search(question: str, mode: str):
        if mode == "hybrid":
            return index.search(question, k=10, corpus=DEV_CORPORA)
        weight = None if mode == "ltr" else float(mode.split("+")[1])
        return order(index, question, model, weight, DEV_CORPORA)

    modes = ["hybrid"] + ["ltr" if w is None else f"ltr+{w}" for w in WEIGHTS]
    try:
        for name in ("tune.yaml", "gold.yaml"):
            _, questions = load_gold(RETRIEVAL / name)
            report = evaluate(in_split(questions, "dev"), search, modes)
            print(name, {m: (r["file"]["mrr"], r["file"]["recall@10"], r["symbol"]["mrr"]) for m, r in report["modes"].items()})
    finally:
        index.close()


def main(argv: list[str]) -> None:
    step, *args = argv
    if step == "sample":
        sample(Path(args[args.index("--expansion") + 1]))
    elif step == "features":
        features(Path(args[0]), args[args.index("--questions") + 1] if "--questions" in args else "doc2query")
    elif step == "train":
        train(Path(args[0]), Path(args[1]))
    elif step == "dev":
        dev(Path(args[0]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
