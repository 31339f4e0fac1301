"""Chunk boundaries, metadata and enrichment on our fixture corpus (real tree-sitter grammars)."""

from pathlib import Path

import pytest

from kopt.index.tokenize import doc_vector, query_vector, tokens
from kopt.ingest.chunk import MAX_LINES
from kopt.ingest.enrich import Registry, diagnostics_in, env_knobs_in, ops_in, passes_in
from kopt.ingest.pipeline import chunk_file, payload

CORPUS = Path(__file__).parent / "fixtures" / "corpus"


def chunks_of(rel: str, hint: str | None = None):
    chunks, fell_back = chunk_file(rel, (CORPUS / rel).read_bytes(), hint)
    assert not fell_back
    return chunks


def by_symbol(chunks, symbol):
    return [c for c in chunks if c.symbol == symbol]


def registry() -> Registry:
    reg = Registry()
    reg.learn((CORPUS / "include/Passes.td").read_text())
    return reg


def test_cpp_definitions_keep_exact_lines_and_whole_patterns():
    rel = "lib/Fixture/FixtureCoalesce.cpp"
    lines = (CORPUS / rel).read_text().splitlines()
    chunks = chunks_of(rel)
    for c in chunks:  # every chunk is exactly its line range
        assert c.body == "\n".join(lines[c.start_line - 1 : c.end_line])
    pattern, = by_symbol(chunks, "ReverseLoadPattern")
    assert pattern.kind == "class" and "matchAndRewrite" in pattern.body and pattern.body.rstrip().endswith("};")
    assert pattern.body.startswith("// Rewrites a load")  # the doc comment travels with it
    assert pattern.qualname == "mlir::triton::gpu::ReverseLoadPattern"
    assert pattern.text.splitlines()[0].startswith(f"{rel}:{pattern.start_line}-{pattern.end_line} | mlir::triton::gpu::")
    the_pass, = by_symbol(chunks, "FixtureCoalescePass")
    assert the_pass.kind == "pass" and "runOnOperation" in the_pass.body


def test_cpp_huge_body_splits_with_header_and_tiny_neighbours_merge():
    chunks = chunks_of("lib/Fixture/FixtureCoalesce.cpp")
    parts = by_symbol(chunks, "accumulateEverything")
    assert len(parts) >= 2 and all(p.end_line - p.start_line < MAX_LINES for p in parts)
    assert all("(part" in p.qualname and p.signature.startswith("float accumulateEverything") for p in parts)
    assert [p.start_line for p in parts[1:]] == [p.end_line + 1 for p in parts[:-1]]  # contiguous, no gaps
    merged, = [c for c in chunks if "tinyOne" in c.symbols]
    assert "tinyTwo" in merged.symbols and "return 2" in merged.body


def test_python_tablegen_mlir_markdown_patterns():
    py = chunks_of("python/triton/fixture_knobs.py")
    assert by_symbol(py, "read_pelican_knob")[0].signature == "def read_pelican_knob()"
    assert by_symbol(py, "FixtureCompiler")[0].kind == "class"
    td = chunks_of("include/Passes.td")
    assert {c.symbol for c in td if c.kind == "td_record"} == {"TritonGPUFixtureCoalesce", "TT_LoadOp", "FixtureBase",
                                                            "TTG_ConvertLayoutOp"}
    mlir = chunks_of("test/fixture_coalesce.mlir")
    assert [(c.symbol, c.start_line, c.end_line) for c in mlir] == [("first_case", 3, 7), ("second_case", 11, 16)]
    assert all(c.passes == ["tritongpu-fixture-coalesce"] and "RUN: --tritongpu-fixture-coalesce" in c.text for c in mlir)
    md = chunks_of("docs/guide.md")
    assert [c.qualname for c in md] == ["Fixture guide", "Fixture guide > Vectorized loads", "Fixture guide > Software pipelining"]
    notes = chunks_of("passes/coalesce.md", "pass_note")
    assert notes[0].kind == "pass_note" and "TritonGPUCoalesce" in notes[0].passes
    assert notes[0].extra["findings"] == ["uncoalesced_access"]
    pats = chunks_of("patterns/loads.yaml")
    assert [(p.symbol, p.start_line, p.end_line) for p in pats] == [("hint_divisibility", 2, 7), ("grouped_ordering", 9, 15)]
    assert pats[1].body.startswith("  # Tile order") and pats[0].extra["findings"] == ["non_vectorized_load"]


def test_unparsable_file_falls_back_to_line_windows():
    chunks, fell_back = chunk_file("lib/Fixture/broken.cpp", (CORPUS / "lib/Fixture/broken.cpp").read_bytes())
    assert fell_back and chunks and chunks[0].start_line == 1 and chunks[-1].end_line == 30


def test_enrichment_maps_passes_ops_diagnostics_knobs():
    reg = registry()
    cpp = (CORPUS / "lib/Fixture/FixtureCoalesce.cpp").read_text()
    assert passes_in(cpp, reg)[:2] == ["TritonGPUFixtureCoalesce", "tritongpu-fixture-coalesce"]
    py = (CORPUS / "python/triton/fixture_knobs.py").read_text()
    assert "tritongpu-fixture-coalesce" in passes_in(py, reg)  # add_fixture_coalesce binding
    assert "tt.load" in ops_in("auto x = cast<triton::LoadOp>(op);", reg)
    assert "ttg.convert_layout" in ops_in("rewriter.create<triton::gpu::ConvertLayoutOp>(loc)", reg)
    assert ops_in("#ttg.blocked<{}> !tt.ptr<f32> {tt.divisibility = 16}", reg) == []
    assert "zebra stride cannot be reversed for operand" in diagnostics_in(cpp)
    assert any(d.startswith("fixture compiler needs capability 80") for d in diagnostics_in(py))
    assert env_knobs_in(cpp) == ["KOPT_FIXTURE_KNOB"] and env_knobs_in(py) == ["KOPT_PELICAN_DUMP"]
    c = by_symbol(chunks_of("lib/Fixture/FixtureCoalesce.cpp"), "ReverseLoadPattern")[0]
    meta = payload(c, "triton", "abc", reg)
    assert {"tt.load", "ttg.convert_layout"} <= set(meta["ops"]) and meta["version"] == "abc"


@pytest.mark.parametrize("text, expected", [
    ("getContiguity", {"getcontiguity", "get", "contiguity"}),
    ("ttg.convert_layout", {"ttg.convert_layout", "ttg", "convert", "layout"}),
    ("MMAv3 sm_90", {"mmav3", "mma", "v3", "sm_90", "sm", "90"}),
    ("num_stages pipelining", {"num_stages", "num", "stag", "pipelin"}),
])
def test_code_aware_tokens(text, expected):
    assert expected <= set(tokens(text))


def test_bm25_vectors_share_ids_between_query_and_document():
    doc_ids, weights = doc_vector("void getContiguity() { return axisInfo.getContiguity(); }", avgdl=10)
    q_ids, _ = query_vector("contiguity")
    assert set(q_ids) <= set(doc_ids) and all(w > 0 for w in weights)


def test_numpy_query_embedding_matches_sentence_transformers():
    import numpy as np

    from kopt.index.bert_query import encode_query, supported
    from kopt.index.embed import DEFAULT_MODEL, MAX_TOKENS, encode, load_model, model_dir

    folder = model_dir(DEFAULT_MODEL)
    assert supported(folder)
    for query in ("software pipelining num_stages on hopper", "ttg.convert_layout " * 100):
        fast = np.array(encode_query(folder, query, MAX_TOKENS))
        exact = load_model(DEFAULT_MODEL).encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
        assert np.abs(fast - exact).max() < 1e-6  # measured: 1.1e-7 - 1.6e-7
        # what ingest stores (bf16 autocast where the CPU has bf16 units) is the same direction
        assert float(fast @ encode(DEFAULT_MODEL, [query])[0]) > 0.9999


def test_a_query_embeds_alike_on_one_blas_thread_or_two(monkeypatch):
    """A second BLAS thread is used only while a core is free; either way the vector is the same."""
    import numpy as np

    from kopt.index import bert_query
    from kopt.index.embed import DEFAULT_MODEL, MAX_TOKENS, model_dir

    folder, query = model_dir(DEFAULT_MODEL), "why does my kernel spill registers when the tile grows " * 4
    vectors = {}
    for busy in (True, False):
        monkeypatch.setattr(bert_query, "_cores_busy", lambda second, busy=busy: busy)
        vectors[busy] = np.array(bert_query.encode_query(folder, query, MAX_TOKENS))
    assert np.abs(vectors[True] - vectors[False]).max() < 1e-6


def test_cores_taken_by_other_processes_read_as_busy():
    """With a spinning process on every core, a query's embedding keeps to one BLAS thread."""
    import os
    import subprocess
    import sys
    import time

    from kopt.index.bert_query import _cores_busy

    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]
    try:
        time.sleep(0.3)
        assert _cores_busy.__wrapped__(0)
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def test_whole_classes_list_their_methods_for_symbol_lookup():
    pattern = by_symbol(chunks_of("lib/Fixture/FixtureCoalesce.cpp"), "ReverseLoadPattern")[0]
    assert pattern.symbols == ["ReverseLoadPattern", "matchAndRewrite"]
    compiler = by_symbol(chunks_of("python/triton/fixture_knobs.py"), "FixtureCompiler")[0]
    assert compiler.symbols == ["FixtureCompiler", "__init__", "make_ttgir"]
