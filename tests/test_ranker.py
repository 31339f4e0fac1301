"""The learned ranker (index/ranker.py): its trees walk as scikit-learn's do, the shipped ones load, and mode
hybrid+ltr orders a real index's candidates (the fixture corpus, tree-sitter, MiniLM, Qdrant Edge on disk)."""

import json
import os
import shutil

import numpy as np
import pytest
from gitrepo import commit_all
from test_index_retrieval import FIXTURES

from evals.retrieval.ltr.make import export
from kopt.config import Settings
from kopt.errors import KoptError
from kopt.index import open_index
from kopt.index.ranker import FEATURES, TREES, WEIGHT, Trees, candidates, load_trees
from kopt.index.search import FILE_REPEAT_DECAY
from kopt.ingest import ingest_corpus


def test_exported_trees_predict_what_scikit_learn_predicts():
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, len(FEATURES))).astype(np.float32)
    x[:, 20:] = rng.integers(0, 2, size=(3000, len(FEATURES) - 20))  # one-hot-like columns, ties at the thresholds
    y = (x[:, 0] + 0.5 * x[:, 3] * x[:, 21] - x[:, 7] > 0.2).astype(np.float32)
    model = HistGradientBoostingClassifier(max_depth=3, max_iter=30, learning_rate=0.1, random_state=0).fit(x, y)
    trees = Trees(json.loads(json.dumps(export(model))))  # as written to disk and read back
    assert np.abs(trees.probability(x) - model.predict_proba(x)[:, 1]).max() < 1e-9
    assert np.abs(trees.probability(x.tolist()[:5]) - model.predict_proba(x[:5])[:, 1]).max() < 1e-9  # plain lists


def test_shipped_trees_load_and_fit_the_features_kopt_computes():
    trees = load_trees()
    doc = json.loads(TREES.read_text())
    assert doc["features"] == FEATURES and len(doc["roots"]) == doc["params"]["max_iter"]
    assert not any(doc["leaf"][r] for r in doc["roots"][:5])  # real splits, not stumps
    p = trees.probability(np.zeros((4, len(FEATURES))))
    assert p.shape == (4,) and ((p > 0) & (p < 1)).all()
    with pytest.raises(KoptError, match="other features"):
        Trees({**doc, "features": FEATURES[:-1]})


@pytest.fixture
def index(tmp_path, monkeypatch):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    root = tmp_path / "triton"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("passes", "patterns"))
    commit_all(root)
    settings = Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")
    ingest_corpus("triton", settings, path=root, progress=False)
    index = open_index(settings)
    yield index
    index.close()


def test_learned_order_ranks_the_candidates_by_hybrid_plus_probability_spread_over_files(index):
    query = "quokka heuristic for the access order"
    hits, rows = candidates(index, query)
    hybrid = index.search(query, k=50)
    assert [h.key for h in hits[:len(hybrid)]] == [h.key for h in hybrid]  # hybrid's list first, in its order
    assert len(rows) == len(hits) and all(len(r) == len(FEATURES) for r in rows)
    assert rows[0][FEATURES.index("hybrid")] == 1.0 and rows[0][FEATURES.index("hybrid_rank")] == 0.0

    learned = index.search(query, k=5, mode="hybrid+ltr")
    probs = load_trees().probability(rows)
    keys = [round(row[0] + WEIGHT * p, 4) for row, p in zip(rows, probs)]
    order, seen, spread = sorted(range(len(hits)), key=lambda i: (-keys[i], i)), {}, {}
    for i in order:  # the n-th further chunk of a file scores x FILE_REPEAT_DECAY^n
        path = hits[i].chunk.path
        spread[i] = round(keys[i] * FILE_REPEAT_DECAY ** seen.get(path, 0), 4)
        seen[path] = seen.get(path, 0) + 1
    want = sorted(order, key=lambda i: -spread[i])[:5]
    assert [h.key for h in learned] == [hits[i].key for i in want]
    assert [h.score for h in learned] == [spread[i] for i in want]
    assert [h.score for h in learned] == sorted((h.score for h in learned), reverse=True)
    assert "TritonGPUFixtureCoalesce" in [h.meta["symbol"] for h in learned[:3]]
    assert [h.key for h in index.search(query, k=3, mode="hybrid+ltr")] == [h.key for h in learned[:3]]  # any k

    many = index.search(query, k=len(hits) + 20, mode="hybrid+ltr")  # past the candidates: hybrid's further hits
    assert [h.key for h in many[:5]] == [h.key for h in learned] and len({h.key for h in many}) == len(many)
    only_mlir = index.search("load", k=10, mode="hybrid+ltr", filters={"language": "mlir"})
    assert only_mlir and all(h.meta["language"] == "mlir" for h in only_mlir)
