"""Offsets from a loaded index (a gather): the adapter cannot form a block copy, so the load
becomes a scalar loop of one-element reads (scf.for ... {ExtractedLoadOrStore})."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask)
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def entry(x, idx):
    out = torch.empty(idx.numel(), dtype=x.dtype, device=x.device)
    gather_kernel[(triton.cdiv(idx.numel(), 1024),)](x, idx, out, idx.numel(), BLOCK=1024)
    return out


def reference(x, idx):
    return x[idx.long()]


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["n"], generator=g).to(device)
    idx = torch.randint(0, case["n"], (case["n"],), generator=g, dtype=torch.int32).to(device)
    return x, idx


CASES = [{"n": 1 << 20}, {"n": 1_000_003}, {"n": 4096}, {"n": 65_537}, {"n": 3 << 18}]
SMALL_CASES = [{"n": 5000}]
