"""Pass notes: every note passes the schema, every anchor resolves in the installed triton package or (`make
eval-data`) in the pinned compiler checkouts, PIPELINE.md matches the pass order a real sm_90 compile runs, and
malformed notes are rejected by field."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import triton

from kopt.errors import KoptError
from kopt.passnotes import (
    check_pass_note,
    load_pass_notes,
    load_pipeline,
    note_paths,
    notes_by_flag,
    read_pass_note,
    resolve_anchor,
)

ROOT = Path(__file__).resolve().parents[1]
PASSES = ROOT / "corpora" / "passes"
ASCEND = PASSES / "ascend"
PACKAGE_PREFIX = "python/triton/"

VALID = """---
pass: tritongpu-coalesce
kind: pass
stage: ttgir
pipeline_fn: make_ttgir
flags: [--tritongpu-coalesce]
anchors:
  - {path: lib/Dialect/TritonGPU/Transforms/Coalesce.cpp, symbol: CoalescePass}
findings: [uncoalesced_access]
version: triton@7c56a5e4
---
# A title

## What it decides
x
## What steers it
x
## How it shows in the IR
x
## When it gives up
x
## What the source must satisfy
x
"""


def all_notes():
    return load_pass_notes([PASSES])


def test_every_note_passes_the_schema():
    paths = note_paths([PASSES])
    problems = {str(p.relative_to(ROOT)): check_pass_note(p) for p in paths}
    assert {k: v for k, v in problems.items() if v} == {}


def test_note_counts_and_unique_pass_names():
    notes = all_notes()
    nvidia = [n for n in notes if n.corpus == "triton"]
    ascend = [n for n in notes if n.corpus == "triton-ascend"]
    assert len(nvidia) >= 25 and len(ascend) >= 8
    assert all(n.stage in ("ttadapter", "ttir") for n in ascend)
    names = [n.pass_name for n in notes]
    assert len(names) == len(set(names)), "two notes claim the same pass"
    assert "unstructured_access" in {f for n in ascend for f in n.findings}


def test_python_anchors_resolve_in_the_installed_triton():
    """triton==3.6.0 (pyproject) ships the pin's python/triton/ as its package: those anchors need no checkout."""
    package = Path(triton.__file__).parent
    anchors = [(n.path.name, a) for n in all_notes() if n.corpus == "triton" for a in n.anchors
               if a["path"].startswith(PACKAGE_PREFIX)]
    assert len(anchors) >= 10
    moved = lambda a: {**a, "path": a["path"].removeprefix(PACKAGE_PREFIX)}
    assert [(name, a) for name, a in anchors if not resolve_anchor(moved(a), package)] == []


@pytest.mark.eval_data
@pytest.mark.parametrize("corpus, checkout", [("triton", "triton_src"), ("triton-ascend", "triton_ascend_src")])
def test_every_anchor_resolves_in_the_pinned_checkout(corpus, checkout, request):
    checkout = request.getfixturevalue(checkout)
    notes = [n for n in all_notes() if n.corpus == corpus]
    assert notes
    unresolved = [(n.path.name, a) for n in notes for a in n.anchors if not resolve_anchor(a, checkout)]
    assert unresolved == []


def test_resolve_anchor_rejects_missing_file_and_missing_symbol(tmp_path):
    (tmp_path / "a.cpp").write_text("struct CoalescePass {};\n")
    assert resolve_anchor({"path": "a.cpp", "symbol": "CoalescePass"}, tmp_path)
    assert not resolve_anchor({"path": "a.cpp", "symbol": "NoSuchPass"}, tmp_path)
    assert not resolve_anchor({"path": "b.cpp", "symbol": "CoalescePass"}, tmp_path)


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("findings: [uncoalesced_access]", "findings: [made_up_id]"), "findings"),
    (lambda t: t.replace("kind: pass\n", ""), "kind"),
    (lambda t: t.replace("{path: lib/Dialect/TritonGPU/Transforms/Coalesce.cpp, symbol: CoalescePass}",
                         "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"), "anchors[0]"),
    (lambda t: t.replace("stage: ttgir", "stage: ptx"), "stage"),
    (lambda t: t.replace("version: triton@7c56a5e4", "version: main"), "version"),
    (lambda t: t.replace("## When it gives up\nx\n", ""), "section"),
    (lambda t: t.replace("# A title\n", ""), "title"),
    (lambda t: t.replace("flags: [--tritongpu-coalesce]", "flags: [tritongpu-coalesce]"), "flags"),
    (lambda t: t.replace("pipeline_fn: make_ttgir", "pipeline_fn: null"), "pipeline_fn"),
    (lambda t: t.replace("anchors:\n", "anchors: [\n", 1), "front matter"),
    (lambda t: t[4:], "front matter"),
])
def test_malformed_note_is_rejected_naming_file_and_field(tmp_path, edit, field):
    good = tmp_path / "good.md"
    good.write_text(VALID)
    assert check_pass_note(good) == []
    bad = tmp_path / "bad-note.md"
    bad.write_text(edit(VALID))
    problems = check_pass_note(bad)
    assert problems and any(p.startswith(field) for p in problems), problems
    with pytest.raises(KoptError, match=rf"bad-note\.md: {re.escape(field)}"):
        load_pass_notes([tmp_path])
    assert [n.path.name for n in load_pass_notes([tmp_path], strict=False)] == ["good.md"]
    assert bad.read_text() == edit(VALID), "checking must never modify the note"


def test_read_pass_note_exposes_sections_and_fields():
    note = read_pass_note(PASSES / "tritongpu-coalesce.md")
    assert note.pass_name == "tritongpu-coalesce" and note.pipeline_fn == "make_ttgir"
    assert note.flags == ["--tritongpu-coalesce"]
    assert "sizePerThread" in note.sections["How it shows in the IR"]
    assert note.title and note.findings


def test_missing_folder_or_index_is_a_user_error(tmp_path):
    with pytest.raises(KoptError, match="not found"):
        load_pass_notes([tmp_path / "nope"])
    with pytest.raises(KoptError, match="not found"):
        load_pipeline(tmp_path / "PIPELINE.md")
    (tmp_path / "PIPELINE.md").write_text("# no table\n")
    with pytest.raises(KoptError, match="no pipeline rows"):
        load_pipeline(tmp_path / "PIPELINE.md")


@pytest.mark.parametrize("folder, corpus", [(PASSES, "triton"), (ASCEND, "triton-ascend")])
def test_pipeline_index_links_resolve_and_cover_every_pass_note(folder, corpus):
    steps = load_pipeline(folder / "PIPELINE.md")
    assert [s.order for s in steps] == list(range(1, len(steps) + 1))
    by_flag = notes_by_flag(all_notes())
    for s in steps:
        if s.note is not None:
            assert s.note.is_file(), s
            assert by_flag.get(s.pass_name) is not None and by_flag[s.pass_name].path.resolve() == s.note.resolve(), s
    linked = {s.note.resolve() for s in steps if s.note}
    passes = [n for n in all_notes() if n.corpus == corpus and n.kind == "pass"]
    assert [n.path.name for n in passes if n.path.resolve() not in linked] == []


def test_pipeline_order_matches_a_real_sm90_compile(tmp_path):
    """The order in PIPELINE.md is the order Triton 3.6 actually runs for an sm_90 matmul."""
    # A child process: Triton opens MLIR_DUMP_PATH once per process, so an earlier compile in this
    # pytest process would have claimed the dump file.
    script = tmp_path / "mm.py"
    script.write_text(textwrap.dedent("""
        import triton, triton.language as tl
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        @triton.jit
        def mm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
            rm = tl.arange(0, BM)
            rn = tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), tl.float32)
            for k in range(0, K, BK):
                x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
                y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
                acc += tl.dot(x, y)
            tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))

        sig = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "K": "i32", "BM": "constexpr", "BN": "constexpr",
               "BK": "constexpr"}
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
        triton.compile(ASTSource(fn=mm, signature=sig, constexprs={"BM": 128, "BN": 128, "BK": 64}, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})
    """))
    dump = tmp_path / "dump.mlir"
    env = {**os.environ, "MLIR_ENABLE_DUMP": "1", "MLIR_DUMP_PATH": str(dump), "TRITON_ALWAYS_COMPILE": "1",
           "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True, timeout=300)
    ran = re.findall(r"IR Dump Before \S+ \(([^)]+)\)", dump.read_text())
    documented = [s.pass_name for s in load_pipeline(PASSES / "PIPELINE.md")]
    assert ran == documented
