"""Ascend target: real compiles through the triton-ascend toolchain (a child process in its venv), and L3
reading the adapter's IR. Needs `kopt toolchain add ascend` (the test command runs it first)."""

from pathlib import Path

import pytest

from kopt.diagnose.l3_ascend import analyze_ascend, ascend_facts
from kopt.errors import CompileError, KoptError
from kopt.harness.ascend import compile_ascend
from kopt.toolchain import toolchain_home

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "ascend"
PYTHON = toolchain_home("ascend") / "bin" / "python"  # resolved at collection, before any test changes KOPT_HOME

pytestmark = pytest.mark.skipif(not PYTHON.exists(),
                                reason=f"Ascend toolchain not set up at {PYTHON}: run `kopt toolchain add ascend`")


def compile_one(path, **kw):
    kernels = compile_ascend(path, python=PYTHON, **kw)
    assert len(kernels) == 1
    return kernels[0]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def compiled():
    return {name: compile_one(EXAMPLES / f"{name}.py", trajectory=(name == "gather"))
            for name in ("vector_add", "gather", "modulo")}


def test_contiguous_offsets_compile_to_bounded_block_copies(compiled):
    k = compiled["vector_add"]
    assert k.target == "ascend:Ascend910B3" and set(k.asm) == {"ttir", "ttadapter"}
    assert "ASCEND_HOME_PATH" in k.ptxas_log  # the binary step failed as expected; the stages were kept
    assert k.grid == [5] and k.constexprs == {"BLOCK": 1024}
    assert k.first_line == line_of(EXAMPLES / "vector_add.py", "def add_kernel")
    facts = ascend_facts(k)
    src = EXAMPLES / "vector_add.py"
    expected = {(line_of(src, "x = tl.load"), "load"), (line_of(src, "y = tl.load"), "load"),
                (line_of(src, "tl.store"), "store")}
    assert {(a.line, a.op) for a in facts.accesses} == expected
    assert all(a.lowering == "block_copy" and a.mask == "bounded" and a.shape == [1024] and a.strides == ["1"]
               for a in facts.accesses)
    assert facts.mix_mode == "aiv" and analyze_ascend([k], src) == []


def test_a_loaded_index_becomes_a_scalar_loop(compiled):
    k, src = compiled["gather"], EXAMPLES / "gather.py"
    facts = ascend_facts(k)
    by_line = {(a.line, a.op): a for a in facts.accesses}
    gather = by_line[(line_of(src, "x = tl.load(x_ptr + idx"), "load")]
    assert (gather.lowering, gather.cause, gather.elements, gather.piece) == ("scalar_loop", "indirect", 1024, [1])
    assert by_line[(line_of(src, "idx = tl.load"), "load")].lowering == "block_copy"
    assert facts.scalarized_by == "TritonToUnstructure"  # read off the adapter's pass-by-pass trajectory
    findings = analyze_ascend([k], src)
    assert [(f.id, f.kernel_lines) for f in findings] == [("unstructured_access", [gather.line])]
    assert "loaded index" in findings[0].message
    assert findings[0].evidence[0].location == f"{src}:{gather.line}"


def test_a_modulo_in_offsets_becomes_a_scalar_loop(compiled):
    k, src = compiled["modulo"], EXAMPLES / "modulo.py"
    facts = ascend_facts(k)
    bias = line_of(src, "b = tl.load")
    loops = [a for a in facts.accesses if a.lowering == "scalar_loop"]
    assert [(a.line, a.op, a.cause) for a in loops] == [(bias, "load", "modulo")]
    assert next(a for a in facts.accesses if a.line == line_of(src, "x = tl.load")).lowering == "block_copy"
    (finding,) = analyze_ascend([k], src)
    assert finding.id == "unstructured_access" and finding.kernel_lines == [bias]
    assert any("%" in c for c in finding.conditions)


KERNELS = '''
import torch, triton, triton.language as tl

@triton.jit
def even_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=(offs < n) & (offs % 2 == 0), other=0.0)
    tl.store(out_ptr + offs, x, mask=offs < n)

@triton.jit
def emb_kernel(w_ptr, idx_ptr, out_ptr, D, BR: tl.constexpr, BD: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    d = tl.arange(0, BD)
    rows = tl.load(idx_ptr + r)
    x = tl.load(w_ptr + rows[:, None] * D + d[None, :], mask=d[None, :] < D)
    tl.store(out_ptr + r[:, None] * D + d[None, :], x, mask=d[None, :] < D)

@triton.jit
def big_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.exp(x) * x, mask=offs < n)

def entry(x, w, idx):
    out = torch.empty_like(x)
    even_kernel[(4,)](x, out, x.numel(), BLOCK=1024)
    emb_kernel[(4,)](w, idx, torch.empty(64, 96), 96, BR=16, BD=128)
    big_kernel[(1,)](x, out, x.numel(), BLOCK=65536)

def reference(x, w, idx): return x
def make_inputs(case, device, seed):
    return torch.randn(4000), torch.randn(100, 96), torch.randint(0, 100, (64,), dtype=torch.int32)
CASES = [{}]
'''


def test_unbounded_masks_row_gathers_and_ub_overflow(tmp_path):
    src = tmp_path / "kernels.py"
    src.write_text(KERNELS)
    kernels = {k.name: k for k in compile_ascend(src, python=PYTHON)}
    assert set(kernels) == {"even_kernel", "emb_kernel", "big_kernel"}
    found = {(f.id, tuple(f.kernel_lines)) for f in analyze_ascend(list(kernels.values()), src)}
    even_load = line_of(src, "x = tl.load(x_ptr + offs, mask=(offs < n) & (offs % 2")
    emb_load = line_of(src, "x = tl.load(w_ptr")
    assert ("masked_access", (even_load,)) in found
    assert ("unstructured_access", (emb_load,)) in found
    assert any(fid == "ub_overflow" and line_of(src, "x = tl.load(x_ptr + offs, mask=offs < n)") in lines
               for fid, lines in found)
    row = next(a for a in ascend_facts(kernels["emb_kernel"]).accesses if a.line == emb_load)
    assert (row.op, row.elements, row.piece) == ("load", 16, [1, 128])  # one 128-wide copy per gathered row


def test_a_kernel_that_does_not_compile_names_its_file(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text(KERNELS.replace("tl.exp(x) * x", "tl.exp(x) * undefined_name"))
    bad = line_of(src, "undefined_name")
    with pytest.raises(CompileError, match=rf"broken.py:{bad}: big_kernel does not compile for ascend:Ascend910B3: NameError"):
        compile_ascend(src, python=PYTHON, kernels=["big_kernel"])


def test_a_missing_toolchain_is_a_clear_error(tmp_path):
    with pytest.raises(KoptError, match="cannot run the Ascend toolchain"):
        compile_ascend(EXAMPLES / "vector_add.py", python=tmp_path / "nope" / "python")
