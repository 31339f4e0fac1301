"""The symbol graph (ingest/symbol_graph.py) on a small tree in Triton's style, chunked by the real chunkers, and
mode hybrid+graph on a real ingest of it (tree-sitter, MiniLM, Qdrant Edge on disk)."""

import os
from pathlib import Path

import pytest
from gitrepo import commit_all

from kopt.config import Settings
from kopt.index import open_index
from kopt.index.backends import EdgeBackend
from kopt.ingest import ingest_corpus, pipeline
from kopt.ingest.symbol_graph import GRAPH_VERSION, build_graph, chunk_key, digest

FLAG = "tritongpu-numbat-shuffle"  # the pass's command-line name: written in its TableGen def only
TD = f"""include "mlir/Pass/PassBase.td"

def TritonGPUReorderLoads : Pass<"{FLAG}", "mlir::ModuleOp"> {{
  let summary = "reorder loads";
  let description = [{{
    Moves every load of a loop body ahead of the arithmetic that waits for it.
  }}];
}}
"""
CPP = """// A made-up pass in the style of Triton's C++.
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace triton {
namespace gpu {

#define GEN_PASS_DEF_TRITONGPUREORDERLOADS
#include "Passes.h.inc"

// Walks the loop body once and returns the position every load should move to, so that no load waits behind
// arithmetic that does not depend on it; loads that feed each other keep their relative order.
static int chooseLoadSlots(Operation *body, llvm::SmallVector<int> &slots) {
  int moved = 0;
  for (Operation &op : body->getRegion(0).front()) {
    if (isa<triton::LoadOp>(op))
      slots.push_back(moved++);
  }
  return moved;
}

// Swaps a load with the arithmetic op in front of it when that op does not produce the load's pointer.
struct SwapLoadPattern : public OpRewritePattern<triton::LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(triton::LoadOp op, PatternRewriter &rewriter) const override {
    Operation *prev = op->getPrevNode();
    if (!prev || prev->hasTrait<OpTrait::IsTerminator>())
      return failure();
    rewriter.moveOpBefore(op, prev);
    return success();
  }
};

// Shuffles the loads of every loop body: picks their slots, then swaps each ahead of the arithmetic before it.
struct ReorderLoadsPass : public impl::TritonGPUReorderLoadsBase<ReorderLoadsPass> {
  void runOnOperation() override {
    llvm::SmallVector<int> slots;
    chooseLoadSlots(getOperation(), slots);
    RewritePatternSet patterns(&getContext());
    patterns.add<SwapLoadPattern>(&getContext());
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace gpu
} // namespace triton
} // namespace mlir
"""
PY = """def make_ttgir(mod, metadata, opt):
    pm = ir.pass_manager(mod.context)
    passes.ttgpuir.add_numbat_shuffle(pm)
    pm.run(mod)
    return mod
"""
FILES = {"include/Passes.td": TD, "lib/ReorderLoads.cpp": CPP, "python/triton/compiler.py": PY}


def chunks_of(files: dict[str, str]) -> list:
    return [c for rel, text in files.items() for c in pipeline.chunk_file(rel, text.encode())[0]]


def find(chunks, path: str, word: str):
    return next(c for c in chunks if c.path == path and word in c.body)


def test_the_graph_links_a_pass_def_binding_pattern_list_and_callee_to_their_definitions():
    chunks = chunks_of(FILES)
    graph = build_graph(chunks)
    td = find(chunks, "include/Passes.td", FLAG)
    pass_class = find(chunks, "lib/ReorderLoads.cpp", "struct ReorderLoadsPass")
    pattern = find(chunks, "lib/ReorderLoads.cpp", "struct SwapLoadPattern")
    helper = find(chunks, "lib/ReorderLoads.cpp", "static int chooseLoadSlots")
    caller = find(chunks, "python/triton/compiler.py", "add_numbat_shuffle")
    assert pass_class.kind == "pass" and pattern.kind == "class" and len({pass_class.start_line, pattern.start_line,
                                                                          helper.start_line}) == 3

    def edges(chunk):
        return [(kind, (path, line)) for kind, path, line in graph.get(chunk_key(chunk), [])]

    assert edges(td) == [("implements", chunk_key(pass_class))]
    assert edges(caller) == [("binds", chunk_key(pass_class))]  # add_numbat_shuffle -> the pass whose flag says so
    assert ("adds", chunk_key(pattern)) in edges(pass_class)
    assert ("calls", chunk_key(helper)) in edges(pass_class)
    assert edges(helper) == [] and edges(pattern) == []


def test_a_name_two_files_define_leads_nowhere_and_the_digest_follows_the_edges():
    chunks = chunks_of(FILES)
    helper = "static int chooseLoadSlots(Operation *body) {\n" + "  // a second definition elsewhere\n" * 12 + "  return 0;\n}\n"
    twice = chunks_of({**FILES, "lib/Other.cpp": helper})
    pass_edges = build_graph(twice)[chunk_key(find(twice, "lib/ReorderLoads.cpp", "struct ReorderLoadsPass"))]
    assert [k for k, _, _ in pass_edges] == ["adds"]  # the call of chooseLoadSlots no longer picks a callee
    assert digest(build_graph(chunks)) == digest(build_graph(chunks_of(FILES)))
    assert digest(build_graph(twice)) != digest(build_graph(chunks))


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "triton"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    commit_all(root)
    return root


@pytest.fixture
def settings(tmp_path, monkeypatch):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    return Settings(workspace=tmp_path, index_path=tmp_path / "home" / "index")


def test_a_query_naming_only_the_pass_flag_finds_its_implementation_through_the_graph(settings, checkout, monkeypatch):
    s = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[])
    entry = EdgeBackend(Path(settings.index_path)).read_catalog()["corpora"]["triton"]
    assert entry["graph"]["version"] == GRAPH_VERSION and entry["graph"]["links"] >= 4
    assert ingest_corpus("triton", settings, path=checkout, progress=False, expand=[]).collection == s.collection
    monkeypatch.setattr(pipeline, "GRAPH_VERSION", GRAPH_VERSION + 1)  # graph code changed: the index is rebuilt
    rebuilt = ingest_corpus("triton", settings, path=checkout, progress=False, expand=[])
    assert rebuilt.collection != s.collection and rebuilt.embedded == 0  # vectors from the cache
    assert EdgeBackend(Path(settings.index_path)).read_catalog()["corpora"]["triton"]["graph"]["version"] == GRAPH_VERSION + 1

    index = open_index(settings)
    try:
        plain = index.search(FLAG, k=5)
        graph = index.search(FLAG, k=5, mode="hybrid+graph")
        top3 = index.search(FLAG, k=3, mode="hybrid+graph")
    finally:
        index.close()
    assert plain[0].chunk.kind == "td_record"  # without the graph the registration outranks the code
    impl = graph[0]
    assert impl.chunk.kind == "pass" and "struct ReorderLoadsPass" in impl.text and FLAG not in impl.text
    assert impl.cite() == next(h for h in plain if h.chunk.kind == "pass").cite()  # a real chunk, its own citation
    assert ["implements", impl.chunk.path, impl.chunk.start_line] in graph[1].chunk.extra["links"]
    assert [h.cite() for h in top3] == [h.cite() for h in graph[:3]]  # the order does not depend on k
