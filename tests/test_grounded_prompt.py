"""The full arm's prompt after reading the campaign's transcripts (issue 23): a real task, its real diagnosis
(launch facts on fake tensors, Triton's binder and, for the wgmma case, its sm_90 compiler; no GPU), rendered by
build_prompt. Per-case launch facts come first, side kernels and shared-memory transposes sink, a tile whose size
is chosen at run time is no small block, catalog guidance appears once, the none arm gets none of it."""

import re
import textwrap
from pathlib import Path

import pytest

from kopt.diagnose.escalate import diagnose
from kopt.diagnose.launch_facts import case_lines
from kopt.patterns import load_patterns
from kopt.rewrite.llm import DETAILED_FINDINGS, build_prompt

ROW_SUM = '''
"""Row sums in two passes: split partials over columns, then a finalize kernel over the small workspace."""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, ws_ptr, N, n_split, cols_per_split, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    split = tl.program_id(1)
    acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for off in range(0, cols_per_split, BLOCK_N):
        cols = split * cols_per_split + off + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
        acc += x.to(tl.float32)
    tl.store(ws_ptr + rows * n_split + split, tl.sum(acc, axis=1))


@triton.jit
def finalize_kernel(ws_ptr, y_ptr, n_split, BLOCK_S: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_S)
    p = tl.load(ws_ptr + row * n_split + offs, mask=offs < n_split, other=0.0)
    tl.store(y_ptr + row, tl.sum(p, axis=0))


def entry(x):
    M, N = x.shape
    y = torch.empty((M,), device=x.device, dtype=torch.float32)
    block_n = triton.next_power_of_2(min(N, 2048))
    split = 4
    ws = torch.empty((M, split), device=x.device, dtype=torch.float32)
    cols_per_split = triton.cdiv(triton.cdiv(N, split), block_n) * block_n
    partial_kernel[(triton.cdiv(M, 2), split)](x, ws, N, split, cols_per_split, ROWS=2, BLOCK_N=block_n)
    finalize_kernel[(M,)](ws, y, split, BLOCK_S=4)
    return y


def reference(x):
    return x.float().sum(1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["M"], case["N"], generator=g).to(device),)


CASES = [
    {"M": 4096, "N": 4096},
    {"M": 3001, "N": 5003},
    {"M": 64, "N": 1_000_000},
    {"M": 8192, "N": 1024},
    {"M": 1024, "N": 8192},
]
'''

NT_MATMUL = '''
"""C = A @ B^T with B read row-major and transposed before the dot (attention's q @ k^T)."""
import torch
import triton
import triton.language as tl


@triton.jit
def nt_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def entry(a, b):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    nt_kernel[(M // 128, N // 128)](a, b, c, M, N, K, BM=128, BN=128, BK=64, num_warps=8)
    return c


def reference(a, b):
    return a @ b.T


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(case["M"], case["K"], generator=g).half()
    return a.to(device), torch.randn(case["N"], case["K"], generator=g).half().to(device)


CASES = [{"M": 4096, "N": 4096, "K": 1024}, {"M": 2048, "N": 4096, "K": 1024}, {"M": 4096, "N": 2048, "K": 512},
         {"M": 1024, "N": 1024, "K": 4096}, {"M": 8192, "N": 1024, "K": 256}]
'''


SCALE_AND_SCAN = '''
"""A wide elementwise pass and a one-program scan over a small counts array (scatter_add's CSR build)."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def scan_kernel(c_ptr, out_ptr, V, BLOCK: tl.constexpr):
    acc = 0
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        c = tl.load(c_ptr + offs, mask=offs < V, other=0)
        tl.store(out_ptr + offs, tl.cumsum(c, 0) + acc, mask=offs < V)
        acc += tl.sum(c, 0)


def entry(x, counts):
    y = torch.empty_like(x)
    out = torch.empty_like(counts)
    scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    scan_kernel[(1,)](counts, out, counts.numel(), BLOCK=1024)
    return y, out


def reference(x, counts):
    return x * 2, counts.cumsum(0).to(counts.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["n"], generator=g)
    return x.to(device), torch.randint(0, 9, (case["v"],), generator=g, dtype=torch.int32).to(device)


CASES = [{"n": 1 << 24, "v": 1 << 16}, {"n": 1 << 22, "v": 1 << 14}, {"n": 1 << 23, "v": 1 << 15},
         {"n": 1 << 24, "v": 1 << 15}, {"n": 1 << 22, "v": 1 << 16}]
'''


def _task(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture()
def row_sum(tmp_path):
    return _task(tmp_path, "row_sum", ROW_SUM)


def _prompt(path: Path, roofline: list[float], grounded: bool = True) -> tuple[str, object]:
    diag = diagnose(path, level="L1", gpu=False, roofline=roofline)
    catalog = {p.id: p for p in load_patterns()}
    patterns = {f.id: [catalog[p] for p in f.patterns if p in catalog] for f in diag.findings}
    perf = {"available": True, "cases": [{"case": c, "ms": 0.05, "roofline": r, "bound": "memory"}
                                         for c, r in zip(diag.launch_facts.cases, roofline)]}
    facts = case_lines(diag.launch_facts, dict(enumerate(roofline)))
    prompt = build_prompt(path.read_text(), perf, [], diag.findings if grounded else None,
                          patterns if grounded else None, facts if grounded else None)
    return prompt, diag


def test_per_case_launch_facts_lead_the_diagnosis(row_sum):
    prompt, _ = _prompt(row_sum, [0.8, 0.4, 0.3, 0.8, 0.8])
    diagnosis = prompt[prompt.index("## kopt's diagnosis"):prompt.index("## Earlier rounds")]
    per_case = diagnosis.index("### Per case")
    assert per_case < diagnosis.index("### 1. ")  # the facts come before the first finding
    lines = {int(m.group(1)): m.group(0) for m in re.finditer(r"^- case (\d) .*$", diagnosis, re.M)}
    assert sorted(lines) == [0, 1, 2, 3, 4]
    assert "40% of roofline" in lines[1] and "partial_kernel grid 6004" in lines[1]
    assert re.search(r"not 16-divisible: .*\bN\b", lines[1])
    assert not re.search(r"not 16-divisible: [^;]*\bN\b", lines[0])  # N=4096 keeps it
    assert "finalize_kernel grid 64 (0.5/SM)" in lines[2]
    share = re.search(r"share of the memory time .*: partial_kernel (\d+)%, finalize_kernel (\d+)%", diagnosis)
    assert share and int(share.group(1)) >= 95 and int(share.group(2)) <= 5


def test_findings_are_trimmed_guidance_once_and_no_catalog_match_lines(row_sum):
    prompt, diag = _prompt(row_sum, [0.8, 0.4, 0.3, 0.8, 0.8])
    assert len(diag.findings) > DETAILED_FINDINGS  # enough findings to trim
    assert "matches pattern" not in prompt and "retrieved for the kernel's description" not in prompt
    detailed = re.findall(r"^### (\d)\. ", prompt, re.M)
    assert detailed == [str(i) for i in range(1, DETAILED_FINDINGS + 1)]
    rest = prompt[prompt.index("### Lower-ranked findings"):prompt.index("## Earlier rounds")]
    assert re.findall(r"^- (\d)\. \w+ \(L\d, confidence", rest, re.M)[0] == str(DETAILED_FINDINGS + 1)
    assert "How:" not in rest and "evidence [" not in rest  # one line each
    titles = re.findall(r"^- known pattern (\w+): (?!see above)", prompt, re.M)
    assert titles and len(titles) == len(set(titles))  # each pattern's guidance once


def test_the_none_arm_gets_no_launch_facts(row_sum):
    prompt, _ = _prompt(row_sum, [0.8, 0.4, 0.3, 0.8, 0.8], grounded=False)
    assert "kopt's diagnosis" not in prompt and "Per case" not in prompt and "grid" not in prompt.split("```")[-1]
    assert "not 16-divisible" not in prompt and "share of the memory time" not in prompt


def test_a_finding_on_a_side_kernel_sinks_and_says_why(row_sum):
    diag = diagnose(row_sum, level="L1", gpu=False)
    side = [f for f in diag.findings if f.message.startswith("finalize_kernel")]
    assert side, [f.message for f in diag.findings]
    for f in side:
        assert "side kernel: finalize_kernel has" in f.message and f.confidence < 0.3
    main = [f for f in diag.findings if f.message.startswith("partial_kernel")]
    assert main and "side kernel" not in " ".join(f.message for f in main)
    assert diag.findings[0].message.startswith("partial_kernel")


def test_a_one_program_scan_is_no_side_kernel_however_few_its_bytes(tmp_path):
    """Its bytes go through one SM: counted at the SMs its grid fills, the scan keeps its share and its finding."""
    diag = diagnose(_task(tmp_path, "scale_scan", SCALE_AND_SCAN), level="L1", gpu=False)
    tiny = next(f for f in diag.findings if f.id == "low_occupancy" and f.message.startswith("scan_kernel"))
    assert "side kernel" not in tiny.message and tiny.confidence >= 0.5


def test_a_tile_sized_at_run_time_is_no_small_block(row_sum):
    """ROWS=2 beside a BLOCK_N the entry computes: the tile's size is unknown, so no small_block for it; the
    finalize kernel's fully literal 4-element tile is still one."""
    diag = diagnose(row_sum, level="L1", gpu=False)
    small = [f for f in diag.findings if f.id == "small_block"]
    assert [f.message.split(":")[0] for f in small] == ["finalize_kernel"]


NT_HELPER = NT_MATMUL.replace("""@triton.jit
def nt_kernel(""", """@triton.jit
def _step(acc, a, b):
    return acc + tl.dot(a, tl.trans(b))


@triton.jit
def nt_kernel(""").replace("acc += tl.dot(a, tl.trans(b))", "acc = _step(acc, a, b)")


@pytest.mark.parametrize("source", [NT_MATMUL, NT_HELPER], ids=["in_kernel", "in_inlined_helper"])
def test_a_transpose_that_wgmma_reads_from_shared_memory_sinks_at_l3(tmp_path, source):
    assert "tl.trans(b)" in source
    path = _task(tmp_path, "nt_matmul", source)
    l1 = {f.id: f for f in diagnose(path, level="L1", gpu=False).findings}
    l3 = {f.id: f for f in diagnose(path, level="L3", gpu=False).findings}
    assert "transpose_before_dot" in l1 and "transpose_before_dot" in l3
    assert l3["transpose_before_dot"].confidence <= l1["transpose_before_dot"].confidence / 2 + 0.01
    assert "shared-memory view" in l3["transpose_before_dot"].message
