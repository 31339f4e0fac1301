"""kopt.index.train on a tiny real index: pairs mined from the fixture corpus, hard negatives from the hybrid
retriever, a few real training steps of the embedder (read back by the numpy query encoder) and the reranker
(which then reorders a real hybrid result)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gitrepo import commit_all

from kopt.config import Settings
from kopt.index import open_index
from kopt.index import train as T

FIXTURES = Path(__file__).parent / "fixtures" / "corpus"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The fixture corpus ingested as `triton`, its pairs mined by kopt.ingest.pairs, and their training examples."""
    from kopt.ingest import ingest_corpus
    from kopt.ingest import pairs as P

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = tmp_path_factory.mktemp("train")
    checkout = tmp / "triton"
    shutil.copytree(FIXTURES, checkout, ignore=shutil.ignore_patterns("passes", "patterns"))
    commit_all(checkout)
    settings = Settings(workspace=tmp, index_path=tmp / "index")
    ingest_corpus("triton", settings, path=checkout, progress=False)
    (tmp / "notes").mkdir()
    assert P.main(["--triton", str(checkout), "--notes", str(tmp / "notes"), "--out", str(tmp / "pairs")]) == 0
    index = open_index(settings)
    try:
        examples = T.build_examples(index, T.load_pairs(tmp / "pairs"))
    finally:
        index.close()
    return settings, examples


def test_examples_hold_indexed_positives_and_hybrid_negatives_of_other_files(tiny):
    _, examples = tiny
    assert len(examples) >= 4
    for ex in examples:
        assert ex.negatives and ex.positive not in ex.negatives
        positive_path = ex.positive.split(":")[0]
        assert all(n.split(":")[0] != positive_path for n in ex.negatives)


def test_trained_embedder_is_fp16_and_the_numpy_encoder_reads_it_as_sentence_transformers(tiny, tmp_path):
    from kopt.index.bert_query import encode_query, read_safetensors, supported
    from kopt.index.embed import DEFAULT_MODEL, MAX_TOKENS, cache_key, encode, load_model, model_dir, models_dir

    _, examples = tiny
    out = models_dir() / T.EMBEDDER
    stats = T.train_embedder(examples, model_dir(DEFAULT_MODEL), out, seconds=600, batch_size=4)
    assert stats["steps"] >= 1 and stats["weights_bytes"] < 50e6
    floats = [w for w in read_safetensors(out / "model.safetensors").values() if w.dtype.kind == "f"]
    assert floats and all(w.dtype == np.float16 for w in floats)
    assert supported(out) and model_dir(T.EMBEDDER) == out and cache_key(T.EMBEDDER).startswith(T.EMBEDDER + "@")
    for query in ("which pass reverses a backwards load", "zebra stride " * 80):
        fast = np.array(encode_query(out, query, MAX_TOKENS))
        exact = load_model(T.EMBEDDER).encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert np.abs(fast - exact).max() < 1e-4 and float(fast @ encode(T.EMBEDDER, [query])[0]) > 0.9999
        shipped = load_model(DEFAULT_MODEL).encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert np.abs(exact - shipped).max() > 1e-3  # training moved it


def test_trained_reranker_reorders_a_real_hybrid_result(tiny):
    from kopt.index.embed import DEFAULT_MODEL, model_dir, models_dir

    settings, examples = tiny
    index = open_index(settings)
    try:
        def top(query: str, mode: str) -> str:
            return index.search(query, corpus="triton", k=5, mode=mode)[0].text

        # a pair whose answer hybrid does not rank first: the reranker, taught that pair, must lift it (24 copies with
        # 3 negatives each: 24 steps of 4 rows; the mean-pooled head needs more than the 12 a CLS one took)
        ex = next(e for e in examples if top(e.query, "hybrid") != e.positive)
        stats = T.train_reranker(T.mined_rows([ex] * 24, negatives=3), model_dir(DEFAULT_MODEL),
                                 models_dir() / T.RERANKER, seconds=600, batch_size=4, lr=1e-3)
        assert stats["steps"] >= 20 and stats["last_loss"] < stats["first_loss"]
        reranked = index.search(ex.query, corpus="triton", k=5, mode="hybrid+rerank")
        assert reranked[0].text == ex.positive and "rerank" in reranked[0].meta
    finally:
        index.close()


def test_train_command_without_pairs_is_one_clear_error(tmp_path):
    kopt = str(Path(os.sys.executable).with_name("kopt"))
    done = subprocess.run([kopt, "index", "train", "--pairs", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "no *.jsonl pair files" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([kopt, "index", "train", "--only", "questions", "--pairs", str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0 and "doc2query-kernel.jsonl: missing" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([kopt, "index", "train", "--only", "questions", "--anchors", ",", "--pairs", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "--anchors" in done.stderr and "Traceback" not in done.stderr


def test_a_chunk_defining_the_positives_symbol_under_another_name_is_no_negative():
    """A pass's TableGen def beside its implementation is a second answer, not a negative; another pass's
    runOnOperation still is one (every pass has that method)."""
    impl = "lib/X/BuildCFG.cpp:44-126 | BuildCFGPass::runOnOperation | void BuildCFGPass::runOnOperation()\nbody"
    tablegen = 'include/X/Passes.td:28-43 | BuildCFG | def BuildCFG : Pass<"build-cfg">\nbody'
    other = "lib/Y/Coalesce.cpp:10-80 | CoalescePass::runOnOperation | void CoalescePass::runOnOperation()\nbody"
    names = T._symbol_names(impl)
    assert names == {"buildcfgpass"}
    assert T._names_overlap(names, T._symbol_names(tablegen))
    assert not T._names_overlap(names, T._symbol_names(other))


def test_teacher_rows_grade_every_judged_candidate_and_skip_what_the_index_lacks(tiny, tmp_path):
    import json

    settings, examples = tiny
    index = open_index(settings)
    try:
        query = examples[0].query
        hits = index.search(query, corpus="triton", k=4, mode="hybrid")
        grades = [9.0, 0.0, 4.0, 0.0][: len(hits)]
        candidates = [[h.chunk.corpus, h.chunk.path, h.chunk.start_line, g] for h, g in zip(hits, grades)]
        candidates.append(["triton", "lib/Gone.cpp", 1, 10.0])  # judged once, no longer in the index
        labels = tmp_path / "labels.jsonl"
        labels.write_text(json.dumps({"query": query, "model": "m", "candidates": candidates}) + "\n")
        rows = T.teacher_rows(index, labels)
    finally:
        index.close()
    assert [(q, text, label) for q, text, label in rows] == [(query, h.text, g / 10) for h, g in zip(hits, grades)]


def test_question_triples_pair_a_kernel_question_with_its_chunks_doc2query_and_the_nearest_of_another_file(tmp_path):
    import json

    def row(miner, path, lines, query):
        return json.dumps({"query": query, "source": miner, "model": "m",
                           "positive": {"corpus": "triton", "path": path, "symbol": "s", "lines": lines}}) + "\n"

    (tmp_path / "doc2query.jsonl").write_text(
        row("doc2query", "lib/A.cpp", [1, 20], "Which pass coalesces global memory accesses?")
        + row("doc2query", "lib/A.cpp", [30, 60], "How does coalescing pick the access order for a load?")
        + row("doc2query", "lib/B.cpp", [1, 40], "Where are shared memory barriers inserted?"))
    (tmp_path / "doc2query-kernel.jsonl").write_text(
        row("doc2query-kernel", "lib/A.cpp", [1, 20], "Why are my loads not coalesced across the warp?")
        + row("doc2query-kernel", "lib/C.cpp", [1, 9], "A question whose chunk has no doc2query question"))
    examples = T.question_examples(tmp_path)
    assert [(e.query, e.positive) for e in examples] == [
        ("Why are my loads not coalesced across the warp?", "Which pass coalesces global memory accesses?")]
    assert examples[0].negatives == ["Where are shared memory barriers inserted?"]  # A.cpp's other chunk is no negative
    (tmp_path / "engineer.jsonl").write_text(row("engineer", "lib/A.cpp", [1, 20], "Where does the compiler reorder my loads?"))
    assert [e.query for e in T.question_examples(tmp_path, anchor_miners=("engineer",))] == [
        "Where does the compiler reorder my loads?"]  # other anchors on request

    (tmp_path / "doc2query-kernel.jsonl").unlink()
    with pytest.raises(T.KoptError, match="doc2query-kernel.jsonl: missing"):
        T.question_examples(tmp_path)

