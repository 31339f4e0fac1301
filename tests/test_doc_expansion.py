"""Document expansion (ingest/expansion.py) on a real ingest of the fixture corpus (Qdrant Edge on disk), and the
doc2query exchange (ingest/doc2query.py) that writes part of its pairs."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import commit_all

from kopt.config import Settings
from kopt.errors import KoptError
from kopt.index import open_index
from kopt.ingest import doc2query, ingest_corpus, pipeline
from kopt.ingest.expansion import load_expansion

FIXTURES = Path(__file__).parent / "fixtures" / "corpus"
CPP = "lib/Fixture/FixtureCoalesce.cpp"
WORDS = "axolotl marzipan"  # in no fixture file: only an expansion can make a chunk match them


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "triton"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("passes", "patterns"))
    commit_all(root)
    return root


@pytest.fixture
def settings(tmp_path, monkeypatch):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    return Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")


def pattern_chunk(root: Path):
    chunks, _ = pipeline.chunk_file(CPP, (root / CPP).read_bytes())
    return next(c for c in chunks if "ReverseLoadPattern" in c.qualname)


def pair_row(chunk, query: str, corpus: str = "triton") -> dict:
    return {"query": query, "source": "doc2query", "model": "m",
            "positive": {"corpus": corpus, "path": chunk.path, "symbol": chunk.qualname,
                         "lines": [chunk.start_line, chunk.end_line]}}


def write_pairs(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_expansion_words_find_the_chunk_whose_text_and_citation_stay_its_own(settings, checkout, tmp_path):
    target = pattern_chunk(checkout)
    pairs = write_pairs(tmp_path / "doc2query.jsonl", [pair_row(target, f"where does the {WORDS} rewrite happen")])

    ingest_corpus("triton", settings, path=checkout, progress=False, expand=[])
    index = open_index(settings)
    assert index.search(WORDS, mode="sparse", k=5) == []  # nothing in the corpus says these words
    plain = index.search("ReverseLoadPattern zebra stride", mode="sparse", k=1)[0]
    index.close()

    s = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[pairs])
    assert s.new == 1 and s.embedded == 1  # one chunk expanded: its question embedded, its own vector from the cache
    index = open_index(settings)
    hits = index.search(WORDS, mode="sparse", k=5)
    hybrid = index.search(WORDS, k=5)
    index.close()
    assert [(h.chunk.path, h.chunk.start_line) for h in hits] == [(CPP, target.start_line)]
    assert hybrid[0].chunk.path == CPP and hybrid[0].chunk.start_line == target.start_line
    assert hits[0].text == target.text == plain.text and "axolotl" not in hits[0].text
    assert hits[0].cite() == plain.cite()
    assert hits[0].chunk.to_dict() == plain.chunk.to_dict()


@pytest.fixture(params=["edge", "server"])
def either_backend(request, settings):
    """The Edge settings, or an in-memory Qdrant server's (qdrant-client), with the same KOPT_HOME."""
    if request.param == "edge":
        return settings
    from kopt.index.backends import ServerBackend

    ServerBackend._memory = None  # a fresh in-memory server per test
    return Settings(workspace=settings.workspace, index_path=settings.index_path, qdrant_url=":memory:")


def test_a_chunks_questions_give_it_a_second_vector_that_finds_it_by_meaning(either_backend, checkout, tmp_path):
    import numpy as np

    from kopt.index.backends import DENSE, QUESTIONS, SPARSE
    from kopt.index.embed import embed_query, encode

    target = pattern_chunk(checkout)
    chunks, _ = pipeline.chunk_file("python/triton/fixture_knobs.py",
                                    (checkout / "python/triton/fixture_knobs.py").read_bytes())
    other = next(c for c in chunks if c.symbol == "read_pelican_knob")
    asked = ["Which pattern turns a load that walks memory backwards into a forward one?",
             "Why is my reversed-index load rewritten before coalescing?"]
    pairs = write_pairs(tmp_path / "doc2query.jsonl", [pair_row(target, q) for q in asked] + [
        pair_row(other, "How do I make the compiler dump its intermediate files through an environment variable?")])
    ingest_corpus("triton", either_backend, path=checkout, progress=False, expand=[pairs])
    index = open_index(either_backend)
    try:
        entry = index.catalog["corpora"]["triton"]
        assert entry["questions"] == 2
        points = {(p[3]["path"], p[3]["start_line"]): p[1] for p in index.backend.scroll(entry["collection"], vectors=True)}
        with_questions = {key for key, vecs in points.items() if QUESTIONS in vecs}
        assert with_questions == {(CPP, target.start_line), (other.path, other.start_line)}  # no question, no vector
        mean = encode(entry["model"], asked).mean(axis=0)
        stored = np.array(points[(CPP, target.start_line)][QUESTIONS])
        assert np.allclose(stored, mean / np.linalg.norm(mean), atol=1e-2)
        assert not np.allclose(stored, points[(CPP, target.start_line)][DENSE], atol=1e-2)

        query = "what rewrites a descending-address read so that it runs ascending?"  # none of the questions' words
        found = index._query(entry["collection"], {QUESTIONS: embed_query(entry["model"], query),
                                                   SPARSE: ([], [])}, 5, None)
        assert [c.start_line for _, _, c in found[QUESTIONS]] == [target.start_line, other.start_line]
        assert index.search(query, k=1)[0].chunk.start_line == target.start_line
    finally:
        index.close()


def test_the_catalog_records_the_pairs_and_other_pairs_make_a_new_build(settings, checkout, tmp_path):
    target = pattern_chunk(checkout)
    pairs = write_pairs(tmp_path / "doc2query.jsonl", [pair_row(target, f"where does the {WORDS} rewrite happen")])
    first = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[pairs])
    again = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[pairs])
    assert again.collection == first.collection and again.new == 0  # same pairs: nothing rebuilt

    catalog = json.loads((settings.index_path / "catalog.json").read_text())
    recorded = catalog["corpora"]["triton"]["expansion"]
    assert recorded["files"] == ["doc2query.jsonl"] and recorded["chunks"] == 1
    listed = subprocess.run([str(Path(sys.executable).parent / "kopt"), "index", "list"], capture_output=True,
                            text=True, env={**os.environ, "KOPT_HOME": str(tmp_path / "home")})
    assert f"expanded: 1 chunks by doc2query.jsonl ({recorded['digest']}), 1 with question vectors" in listed.stdout

    write_pairs(pairs, [pair_row(target, "which pattern turns a backwards load into a forward one")])
    other = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[pairs])
    catalog = json.loads((settings.index_path / "catalog.json").read_text())
    assert other.collection != first.collection and other.version == first.version  # citations keep the commit
    assert catalog["corpora"]["triton"]["expansion"]["digest"] != recorded["digest"]
    index = open_index(settings)
    assert index.search(WORDS, mode="sparse", k=5) == []  # the old expansion is gone with its build
    assert index.search("backwards forward", mode="sparse", k=1)[0].chunk.start_line == target.start_line
    index.close()

    none = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[])
    catalog = json.loads((settings.index_path / "catalog.json").read_text())
    assert none.collection != other.collection and "expansion" not in catalog["corpora"]["triton"]


def test_caps_turns_and_bad_rows(tmp_path, checkout):
    target = pattern_chunk(checkout)
    a = write_pairs(tmp_path / "lit.jsonl", [pair_row(target, f"lit case number {i} here") for i in range(20)])
    b = write_pairs(tmp_path / "doc2query.jsonl", [pair_row(target, "a question an engineer asks")])
    exp = load_expansion([a, b], max_queries=3, max_chars=1000)
    text = exp.text_for("triton", CPP, target.start_line, target.end_line)
    assert text.splitlines() == ["lit case number 0 here", "a question an engineer asks", "lit case number 1 here"]
    assert exp.text_for("triton-ascend", CPP, target.start_line, target.end_line) == ""  # corpus is part of the key
    assert len(load_expansion([a], max_queries=50, max_chars=60).texts[("triton", CPP, target.start_line,
                                                                         target.end_line)]) <= 60
    assert load_expansion([a, b]).digest != load_expansion([a]).digest

    (tmp_path / "bad.jsonl").write_text('{"query": "no positive here at all"}\n')
    with pytest.raises(KoptError, match=r"bad.jsonl:1: not a pair row"):
        load_expansion([tmp_path / "bad.jsonl"])
    with pytest.raises(KoptError, match="no pair files"):
        load_expansion([checkout])  # a folder without pair files
    folder = tmp_path / "pairs"
    folder.mkdir()
    for name in ("lit", "commit", "doc2query-kernel", "doc2query"):
        shutil.copy(a, folder / f"{name}.jsonl")
    assert load_expansion([folder]).files == ["doc2query.jsonl", "doc2query-kernel.jsonl"]  # the default miners, not lit or commit


def test_cli_refuses_expand_with_no_expand_in_one_line(tmp_path):
    pairs = write_pairs(tmp_path / "p.jsonl", [])
    done = subprocess.run([str(Path(sys.executable).parent / "kopt"), "ingest", "patterns", "--expand", str(pairs),
                           "--no-expand"], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "give --expand or --no-expand, not both" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---- doc2query: requests out, replies in ------------------------------------------------------------------------

def test_doc2query_writes_requests_and_collects_replies_with_their_model(tmp_path, checkout):
    exchange, out = tmp_path / "exchange", tmp_path / "pairs"
    assert doc2query.write({"triton": checkout}, exchange, per_request=2) >= 2
    batches = json.loads((exchange / "batches.json").read_text())["requests"]
    assert {len(refs) for refs in batches.values()} <= {1, 2}
    rid, refs = next((rid, refs) for rid, refs in sorted(batches.items()) if len(refs) == 2)
    request = json.loads((exchange / f"{rid}.request.json").read_text())
    assert request["context"]["purpose"] == "doc2query"
    assert all(ref["corpus"] == "triton" and not ref["path"].startswith("test/") for ref in refs)
    assert refs[0]["path"] in request["messages"][1]["content"]

    assert doc2query.collect(exchange, out) == (len(batches), 0, 0)  # no reply yet: nothing, and no error
    (exchange / f"{rid}.reply.md").write_text(
        "model: test-model-7b\n"
        "[1] where are backwards loads turned into forward loads\n"
        "Here are the questions:\n"                     # prose: dropped
        "[9] a number no excerpt has here\n"            # unknown excerpt: dropped
        "[2] too short\n"                               # under MIN_WORDS: dropped
        "[2]   which code decides the coalescing order of a pass\n"
        "[1] where are backwards loads turned into forward loads\n")  # repeated: dropped
    assert doc2query.collect(exchange, out) == (len(batches), 1, 2)
    rows = [json.loads(line) for line in (out / "doc2query.jsonl").read_text().splitlines()]
    assert {r["model"] for r in rows} == {"test-model-7b"} and {r["source"] for r in rows} == {"doc2query"}
    by_query = {r["query"]: r["positive"] for r in rows}
    assert by_query["where are backwards loads turned into forward loads"] == refs[0]
    assert by_query["which code decides the coalescing order of a pass"] == refs[1]

    request["messages"][1]["content"] += "\n(edited)"
    (exchange / f"{rid}.request.json").write_text(json.dumps(request))
    with pytest.raises(KoptError, match="refused"):
        doc2query.collect(exchange, out)
    assert doc2query.main(["collect", "--exchange", str(exchange), "--out", str(out)]) == 1


@pytest.mark.parametrize("voice, asks_for, question", [
    ("kernel", "kernel authors", "why does my kernel get slower when I raise num_stages"),
    ("stage", "tracing something through the compiler's stages",
     "how does the num_stages option reach the pass that multi-buffers loads"),
])
def test_other_voices_ask_in_their_words_and_collect_beside(tmp_path, checkout, voice, asks_for, question):
    """--voice kernel|stage: the same definitions, the voice's prompt, rows in doc2query-<voice>.jsonl alone."""
    exchange, out = tmp_path / "exchange", tmp_path / "pairs"
    assert doc2query.main(["write", "--triton", str(checkout), "--exchange", str(exchange), "--per-request", "50",
                           "--voice", voice]) == 0
    rid, refs = next(iter(json.loads((exchange / "batches.json").read_text())["requests"].items()))
    request = json.loads((exchange / f"{rid}.request.json").read_text())
    assert request["context"]["purpose"] == f"doc2query-{voice}" and asks_for in request["messages"][0]["content"]
    (exchange / f"{rid}.reply.md").write_text(f"model: test-model-7b\n[1] {question}\n")
    assert doc2query.collect(exchange, out) == (1, 1, 1)
    (row,) = [json.loads(line) for line in (out / f"doc2query-{voice}.jsonl").read_text().splitlines()]
    assert row["source"] == f"doc2query-{voice}" and row["positive"] == refs[0]
    assert sorted(p.name for p in out.iterdir()) == [f"doc2query-{voice}.jsonl"]


def test_the_contrast_voice_shows_each_excerpt_with_the_other_files_search_confuses_it_with(settings, checkout, tmp_path):
    """--voice contrast: each chunk's first doc2query question is searched in the index; the request shows the top hits
    of other files beside the excerpt, and a chunk without a question is asked about alone."""
    target = pattern_chunk(checkout)
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    write_pairs(pairs / "doc2query.jsonl", [pair_row(target, "which pattern reverses the load order of an operand")])
    ingest_corpus("triton", settings, path=checkout, progress=False, expand=[])
    exchange = tmp_path / "exchange"
    assert doc2query.main(["write", "--triton", str(checkout), "--exchange", str(exchange), "--per-request", "50",
                           "--voice", "contrast", "--pairs", str(pairs)]) == 0
    (rid, refs), = json.loads((exchange / "batches.json").read_text())["requests"].items()
    user = json.loads((exchange / f"{rid}.request.json").read_text())["messages"][1]["content"]
    excerpts = user.split("\n\n[")
    mine = next(e for e in excerpts if f"({target.kind} {target.qualname})" in e)
    shown = [line for line in mine.split("Neighbours it is confused with:\n")[1].splitlines() if line.startswith("- ")]
    assert 1 <= len(shown) <= doc2query.NEIGHBOURS and not any(line.startswith(f"- {CPP} ") for line in shown)
    assert sum("Neighbours it is confused with" in e for e in excerpts) == 1  # only the chunk that has a question
    assert doc2query.main(["write", "--triton", str(checkout), "--exchange", str(tmp_path / "none"),
                           "--voice", "contrast", "--pairs", str(tmp_path / "empty")]) == 1  # no questions: an error


def test_new_only_asks_about_uncovered_chunks_and_collect_keeps_the_other_rows(tmp_path, checkout):
    """A corpus that grew: questions for its new chunks only, merged into the pairs file without losing a row."""
    first, out = tmp_path / "first", tmp_path / "pairs"
    doc2query.write({"triton": checkout}, first, per_request=1)
    batches = json.loads((first / "batches.json").read_text())["requests"]
    rid, (covered,) = sorted(batches.items())[0]
    (first / f"{rid}.reply.md").write_text("model: m1\n[1] which code answers the first question here\n")
    assert doc2query.collect(first, out) == (len(batches), 1, 1)

    grown = tmp_path / "grown"
    assert doc2query.write({"triton": checkout}, grown, per_request=1, new_only=out) == len(batches) - 1
    again = json.loads((grown / "batches.json").read_text())["requests"]
    assert covered not in [ref for refs in again.values() for ref in refs]
    rid2, (new,) = sorted(again.items())[0]
    (grown / f"{rid2}.reply.md").write_text("model: m2\n[1] which code answers the second question here\n")
    assert doc2query.collect(grown, out) == (len(again), 1, 2)
    rows = [json.loads(line) for line in (out / "doc2query.jsonl").read_text().splitlines()]
    assert sorted((r["model"], r["positive"] == covered, r["positive"] == new) for r in rows) == [
        ("m1", True, False), ("m2", False, True)]
    assert doc2query.main(["write", "--triton", str(checkout), "--exchange", str(tmp_path / "typo"),
                           "--new-only", str(tmp_path / "no-such-pairs")]) == 1  # a mistyped folder asks nothing
    assert not (tmp_path / "typo").exists()


def test_a_package_corpus_takes_the_questions_of_the_same_file_in_its_checkout(tmp_path):
    from kopt.index.search import checkout_path

    def row(path: str) -> dict:
        return {"query": f"a question about {path}", "source": "doc2query", "model": "m",
                "positive": {"corpus": "triton", "path": path, "symbol": "s", "lines": [10, 40]}}

    pairs = write_pairs(tmp_path / "doc2query.jsonl", [row("python/triton/language/core.py"),
                                                       row("third_party/nvidia/backend/compiler.py")])
    exp = load_expansion([pairs])
    assert exp.text_for("triton-pkg", "language/core.py", 10, 40) == "a question about python/triton/language/core.py"
    assert exp.text_for("triton-pkg", "backends/nvidia/compiler.py", 10, 40).endswith("nvidia/backend/compiler.py")
    assert exp.text_for("triton-pkg", "language/core.py", 11, 40) == ""  # other lines: another chunk
    assert exp.text_for("triton-ascend-pkg", "language/core.py", 10, 40) == ""  # the other checkout's pairs only
    assert checkout_path("triton-pkg", "backends/nvidia/driver.py") == "third_party/nvidia/backend/driver.py"
    assert checkout_path("triton-pkg", "profiler/profile.py") == "third_party/proton/proton/profile.py"  # Proton
    assert pipeline.default_expansion("triton-pkg") == pipeline.default_expansion("triton") != []
