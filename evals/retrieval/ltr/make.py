"""The learned ranker (index/ranker.py): its fit on the looked-at blind questions, and the earlier attempts.

The trees of kopt's default order, hybrid+ltr (evals/retrieval/README.md, "A learned ranker fitted on the looked-at
blind questions"; `cv --by-file` is the gate a later fit must pass, its `default` row the order kopt ships):

    python evals/retrieval/ltr/make.py cv [--second] [--by-file]  # leave one tuning set out (or test unseen files)
    python evals/retrieval/ltr/make.py fit [--second]             # -> index/models/ranker.json (about 2 minutes)

--second: the second fit (README, "The learned ranker, second fit"): the dev sets too, each question in two scopes.

Both read the index kopt ships (KOPT_HOME: triton and triton-ascend with the default expansion, passes, patterns).

The earlier attempt, trained on corpus-mined questions (README, "A learned ranker over the hybrid candidates"; it
lost to hybrid on dev; the features are now the shipped ranker's, five about the question added):

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
import random
import sys
import time
from pathlib import Path

from kopt.index.hits import Hit
from kopt.index.ranker import FEATURES, WEIGHT, candidates

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: evals.* as the tests import it
from evals.retrieval.teacher.make import held_out_files

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


TUNING_SETS = ("blind-2026-12", *(f"blind-2026-12{c}" for c in "bcdefghij"))  # every look taken: they teach now
EVERY_CORPUS = ["triton", "triton-ascend", "passes", "patterns"]
TREES_OUT = HERE.parents[2] / "index" / "models" / "ranker.json"
# key = hybrid / best + w x probability (None: the trees alone); "default" is kopt's order: w = WEIGHT, then spread
ORDERS = {"hybrid": 0.0, "trees": None, "w0.3": 0.3, "w1": 1.0, "default": WEIGHT}


def _engineer_questions() -> list:
    """pairs/engineer.jsonl as questions: one per distinct query, its positives as golds."""
    from kopt.retrieval_eval import Gold, Question

    golds: dict[str, list] = {}
    for row in _rows("engineer"):
        p = row["positive"]
        golds.setdefault(row["query"], []).append(Gold(p["corpus"], p["path"], p.get("symbol") or "?", tuple(p["lines"])))
    return [Question(f"engineer-{n}", q, "mechanism", False, tuple(g), "test") for n, (q, g) in enumerate(golds.items())]


DEV_SETS = {"tune": ("tune.yaml", "all"), "gold-dev": ("gold.yaml", "dev")}  # the second fit's: the older style
NARROW = ["triton", "passes", "patterns"]  # the scope `kopt eval retrieval` searches by default


def _tuning_items(second: bool = False) -> dict[str, list[dict]]:
    """Per tuning set (and 'engineer'): each question's candidates as feature rows, file labels and metadata. The
    second fit adds the dev sets and searches each question twice: every corpus, and NARROW where it has a gold."""
    import numpy as np

    from kopt.config import load_settings
    from kopt.index import open_index
    from kopt.retrieval_eval import first_rank, in_split, load_gold

    groups = {name: load_gold(RETRIEVAL / f"{name}.yaml")[1] for name in TUNING_SETS}
    if second:
        for name, (file, split) in DEV_SETS.items():
            groups[name] = in_split(load_gold(RETRIEVAL / file)[1], split)
    groups["engineer"] = _engineer_questions()
    scopes = {"every": EVERY_CORPUS, **({"narrow": NARROW} if second else {})}
    index = open_index(load_settings())
    index.preload()
    items: dict[str, list[dict]] = {}
    started = time.time()
    try:
        for name, questions_ in groups.items():
            items[name] = []
            for q, (scope, corpora) in ((q, s) for q in questions_ for s in scopes.items()):
                if not any(g.corpus in corpora for g in q.gold):
                    continue
                hits, rows = candidates(index, q.question, corpora)
                metas = [{k: h.meta.get(k) for k in ("corpus", "path", "start_line", "end_line", "symbol", "qualname")}
                         for h in hits]
                items[name].append({"question": q, "scope": scope, "metas": metas,
                                    "x": np.array(rows, dtype=np.float32).reshape(-1, len(FEATURES)),
                                    "y": np.array([first_rank(q, [m], "file") == 1 for m in metas], dtype=np.float32)})
            print(f"{name}: {len(items[name])} searches, {time.time() - started:.0f} s", flush=True)
    finally:
        index.close()
    return items


def _fit(items: list[dict]):
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.concatenate([it["x"] for it in items])
    y = np.concatenate([it["y"] for it in items])
    return HistGradientBoostingClassifier(**PARAMS, random_state=SEED).fit(x, y)


def _reciprocal_ranks(item: dict, keys, spread: bool = False) -> tuple[float, float]:
    """File and symbol 1/rank of the top 10 by `keys` (ties: hybrid order), 0 when missed; `spread`: then spread over
    files as kopt's order is."""
    from kopt.index.search import spread_scores
    from kopt.retrieval_eval import first_rank

    order = sorted(range(len(keys)), key=lambda i: (-keys[i], i))
    if spread:
        paths = [item["metas"][i]["path"] for i in order]
        spread_keys = spread_scores(paths, [round(float(keys[i]), 4) for i in order])
        order = [i for _, i in sorted(zip(spread_keys, order), key=lambda pair: -pair[0])]
    top = [item["metas"][i] for i in order[:10]]
    ranks = [first_rank(item["question"], top, level) for level in ("file", "symbol")]
    return tuple(1 / r if r else 0.0 for r in ranks)


def _gold_files(item: dict) -> set:
    return {(g.corpus, g.path) for g in item["question"].gold}


def _folds(items: dict[str, list[dict]], second: bool, by_file: bool):
    """(training items, [(set name, test item)]) per fold. By set: leave one tuning set out. By file: five random halvings
    of the gold files, each side tested on questions whose gold files all lie in it, trained on questions whose gold
    files all lie outside it, so no fold's test asks about a file its training asks about."""
    trains = [(name, it) for name, its in items.items() for it in its
              if second or (it["scope"] == "every" and name not in DEV_SETS)]
    tests = [(name, it) for name, its in items.items() if name != "engineer" for it in its]
    if not by_file:
        for held in dict.fromkeys(name for name, _ in tests):
            yield [it for name, it in trains if name != held], [(name, it) for name, it in tests if name == held]
        return
    files = sorted({f for _, it in trains + tests for f in _gold_files(it)})
    for seed in range(5):
        half = set(random.Random(seed).sample(files, len(files) // 2))
        for side in (half, set(files) - half):
            yield ([it for _, it in trains if not _gold_files(it) & side],
                   [(name, it) for name, it in tests if _gold_files(it) <= side])


def cv(second: bool = False, by_file: bool = False) -> None:
    """Cross-validated file and symbol MRR of hybrid and each order, with each order's paired difference to hybrid
    (95% bootstrap), per question style. The engineer questions are in every fold's training. `by_file` tests only
    places no training question asks about: the check a learned order must pass (README, "A check after the looks")."""
    import numpy as np

    items = _tuning_items(second or by_file)
    scores: dict[str, dict[str, list]] = {}
    for fold, (train, test) in enumerate(_folds(items, second, by_file)):
        model = _fit(train)
        for name, it in test:
            p = model.predict_proba(it["x"])[:, 1] if len(it["x"]) else np.zeros(0)
            style = "dev style" if name in DEV_SETS else "blind style"
            for label in ("all", f"{style}, {'every corpus' if it['scope'] == 'every' else 'narrow scope'}"):
                for order, w in ORDERS.items():
                    ranks = _reciprocal_ranks(it, p if w is None else it["x"][:, 0] + w * p, order == "default")
                    scores.setdefault(label, {o: [] for o in ORDERS})[order].append(ranks)
        print(f"fold {fold}: trained on {len(train)} searches, tested {len(test)}", flush=True)
    rng = np.random.default_rng(0)
    for label, by_order in scores.items():
        base = np.array(by_order["hybrid"])
        print(f"{label} ({len(base)} searches):")
        for order, ranks in by_order.items():
            ranks = np.array(ranks)
            diff = ranks[:, 0] - base[:, 0]
            means = diff[rng.integers(0, len(diff), (10000, len(diff)))].mean(axis=1)
            low, high = np.quantile(means, [0.025, 0.975])
            print(f"  {order}: file MRR {ranks[:, 0].mean():.4f} ({diff.mean():+.4f} [{low:+.4f}, {high:+.4f}], "
                  f"{(diff > 0).sum()} better, {(diff < 0).sum()} worse), "
                  f"symbol MRR {ranks[:, 1].mean():.4f} ({ranks[:, 1].mean() - base[:, 1].mean():+.4f})")


def export(model) -> dict:
    """A fitted binary HistGradientBoostingClassifier as the flat arrays index/ranker.py's Trees read."""
    doc = {"features": FEATURES, "params": PARAMS, "seed": SEED,
           "baseline": float(model._baseline_prediction.ravel()[0]), "roots": [], "feature": [], "threshold": [],
           "left": [], "right": [], "value": [], "leaf": []}
    for (tree,) in model._predictors:  # one tree per iteration for a binary classifier
        offset = len(doc["feature"])
        doc["roots"].append(offset)
        for node in tree.nodes:
            doc["feature"].append(int(node["feature_idx"]))
            doc["threshold"].append(float(node["num_threshold"]))
            doc["left"].append(offset + int(node["left"]))
            doc["right"].append(offset + int(node["right"]))
            doc["value"].append(float(node["value"]))
            doc["leaf"].append(bool(node["is_leaf"]))
    return doc


def fit(out: Path = TREES_OUT, second: bool = False) -> None:
    """The trees on every tuning question, written as index/models/ranker.json, checked against scikit-learn."""
    import numpy as np

    from kopt.index.ranker import Trees

    items = _tuning_items(second)
    model = _fit([it for its in items.values() for it in its])
    sets = [*TUNING_SETS, *(DEV_SETS if second else ()), "pairs/engineer.jsonl"]
    doc = {**export(model), "searches": sum(map(len, items.values())), "sets": sets,
           "scopes": ["every corpus", *(["triton, passes, patterns"] if second else [])]}
    rows = np.concatenate([it["x"] for its in items.values() for it in its])
    gap = np.abs(Trees(doc).probability(rows) - model.predict_proba(rows)[:, 1]).max()
    assert gap < 1e-9, f"the exported trees disagree with scikit-learn's by {gap}"
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"{len(doc['roots'])} trees, {len(doc['feature'])} nodes, {doc['searches']} searches -> {out} "
          f"({out.stat().st_size} bytes)")


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
    elif step == "cv":
        cv("--second" in args, "--by-file" in args)
    elif step == "fit":
        paths = [a for a in args if a != "--second"]
        fit(Path(paths[0]) if paths else TREES_OUT, "--second" in args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
