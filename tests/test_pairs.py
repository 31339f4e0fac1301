"""Training-pair miners (kopt.ingest.pairs) on a small checkout shaped like Triton's, written here in kopt's words."""

import json
import subprocess
import sys

import pytest
from gitrepo import commit_all

from kopt.ingest import pairs as P

FILES = {
    "include/triton/Widen/Passes.td": '''\
def TritonWidenLoads : Pass<"triton-widen-loads", "mlir::ModuleOp"> {
  let summary = "widen narrow loads";
  let description = [{
    Rewrites loads whose pointers are provably contiguous into vector loads
    of sixteen bytes, so that each thread issues fewer memory requests.
  }];
}
''',
    "lib/Widen/WidenLoads.cpp": '''\
#define GEN_PASS_DEF_TRITONWIDENLOADS
#include "triton/Widen/Passes.h.inc"

/// Returns how many elements one thread may read at once, given the
/// contiguity proven for the pointer operand.
static int widthFor(int contiguity, int elemBits) {
  if (elemBits == 0)
    return emitError(loc, "element width must be positive to widen a load");
  return std::min(contiguity, 128 / elemBits);
}

//===----------------------------------------------------------------------===//
// The driver of the widening, walking every load of the module
//===----------------------------------------------------------------------===//

struct TritonWidenLoadsPass : impl::TritonWidenLoadsBase<TritonWidenLoadsPass> {
  void runOnOperation() override {
    getOperation().walk([&](LoadOp op) { op.setWidth(widthFor(op.contiguity(), op.bits())); });
  }
};
''',
    "test/Widen/widen_other_backend.mlir": '''\
// RUN: triton-opt %s --triton-widen-loads --other-backend-lowering | FileCheck %s

// CHECK: other.load_wide
tt.func @lowered_elsewhere() {
  tt.return
}
''',
    "python/triton/widen.py": '''\
def widen_hint(width):
    """Tell the compiler that a pointer block is contiguous for this many elements."""
    if width <= 0:
        raise ValueError("a widen hint needs a positive element count")
    return width
''',
    "test/Widen/widen.mlir": '''\
// RUN: triton-opt %s --triton-widen-loads | FileCheck %s

// CHECK-LABEL: @contiguous_load
// CHECK: tt.load %[[PTR:.*]] {width = 4
tt.func @contiguous_load(%p: tensor<128x!tt.ptr<f32>>) {
  tt.return
}
''',
}

NOTE = '''\
---
pass: triton-widen-loads
anchors:
  - {path: lib/Widen/WidenLoads.cpp, symbol: TritonWidenLoadsPass}
  - {path: lib/Widen/WidenLoads.cpp, symbol: widthFor}
version: triton@00000000
---
# triton-widen-loads: fewer, wider loads

Why are my loads scalar although the data is contiguous? This pass decides the vector width.

## What steers it
The contiguity of the pointer and the element width, computed in `widthFor`.
'''


@pytest.fixture
def corpora(tmp_path):
    root = tmp_path / "triton"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    commit_all(root)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "triton-widen-loads.md").write_text(NOTE)
    return root, notes


def _by(pairs, needle):
    hits = [p for p in pairs if p and needle in p["query"]]
    assert hits, f"no pair whose query holds {needle!r}: {[p['query'] for p in pairs if p]}"
    return hits[0]


def test_each_miner_finds_its_pair(corpora):
    root, notes = corpora
    tree = P.load_corpus("triton", root)
    impls = P.implementations(tree)
    assert impls["TritonWidenLoads"].qualname.endswith("TritonWidenLoadsPass")

    doc = _by(P.mine_docs(tree), "elements one thread may read")
    assert doc["positive"]["symbol"].endswith("widthFor") and "widthFor" not in doc["query"]
    assert not [p for p in P.mine_docs(tree) if p and "driver of the widening" in p["query"]]  # a section header
    py_doc = _by(P.mine_docs(tree), "pointer block is contiguous")
    assert py_doc["positive"]["path"] == "python/triton/widen.py"

    td = _by(P.mine_tablegen(tree, impls), "widen narrow loads")
    assert td["positive"]["symbol"].endswith("TritonWidenLoadsPass") and "sixteen bytes" in td["query"]

    lit_pairs = [p for p in P.mine_lit(tree, impls) if p]
    assert len(lit_pairs) == 1, "a case that also runs a pass the corpus lacks is not about this pass"
    lit = _by(lit_pairs, "--triton-widen-loads")
    assert "tt.load %PTR {width = 4" in lit["query"] and lit["positive"] == td["positive"]

    diags = P.mine_diagnostics(tree)
    assert _by(diags, "element width must be positive")["positive"]["symbol"].endswith("widthFor")
    assert _by(diags, "needs a positive element count")["positive"]["symbol"] == "widen_hint"

    note = P.mine_pass_notes(P.load_corpus("passes", notes), {"triton": tree})
    opening = _by(note, "Why are my loads scalar")
    assert opening["query"].startswith("triton-widen-loads: fewer, wider loads. Why")
    assert opening["positive"]["symbol"].endswith("TritonWidenLoadsPass")
    assert _by(note, "element width, computed in")["positive"]["symbol"].endswith("widthFor")


def test_a_bare_identifier_is_no_query():
    chunk = P.Chunk("lib/a.cpp", "cpp", "function", 1, 3, "int widthFor();", "widthFor", "widthFor")
    assert P._pair("widthFor", "triton", chunk, "docstring") is None
    assert P._pair("how wide may one load be", "triton", chunk, "docstring") is not None


def test_the_command_writes_the_same_files_twice(corpora, tmp_path):
    root, notes = corpora
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        assert P.main(["--triton", str(root), "--notes", str(notes), "--out", str(out)]) == 0
        outs.append({f.name: f.read_text() for f in sorted(out.glob("*.jsonl"))})
    assert outs[0] == outs[1]
    rows = [json.loads(line) for text in outs[0].values() for line in text.splitlines()]
    assert {r["source"] for r in rows} == {"docstring", "tablegen", "lit", "diagnostic", "pass_note"}
    assert len({json.dumps(r, sort_keys=True) for r in rows}) == len(rows)


def test_no_checkout_is_one_clear_error(capsys):
    assert P.main([]) == 1
    assert "give --triton DIR" in capsys.readouterr().err



def test_hard_negatives_rank_other_chunks_never_a_positive(corpora):
    root, _ = corpora
    tree = P.load_corpus("triton", root)
    pairs = {"diagnostic": [p for p in P.mine_diagnostics(tree) if p]}
    P.add_hard_negatives(pairs, {"triton": tree}, 2)
    row = _by(pairs["diagnostic"], "element width must be positive")
    assert len(row["negatives"]) == 2 and row["positive"] not in row["negatives"]
    assert row["negatives"][0]["symbol"] == "widen_hint"   # "a positive element count": the closest words, not the answer


def test_the_generator_opens_no_eval_set(corpora, tmp_path):
    """Run it with Python's audit hook watching every file it opens: nothing under evals/ (gold, holdout, blind)."""
    root, notes = corpora
    script = ("import sys; opened = []\n"
              "sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' else None)\n"
              "from kopt.ingest import pairs\n"
              f"assert pairs.main(['--triton', {str(root)!r}, '--notes', {str(notes)!r}, '--out', {str(tmp_path / 'o')!r}]) == 0\n"
              "print('\\n'.join(opened))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    opened = done.stdout.splitlines()
    assert any(path.endswith("WidenLoads.cpp") for path in opened)   # the hook does see the sources
    assert not [path for path in opened if "evals" in path or path.endswith((".yaml", ".yml"))]
