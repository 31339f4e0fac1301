"""Inclusive prefix sum (cumsum) of a long fp32 vector; fixed: three-phase scan (parallel block totals, one small scan of the totals, parallel block scans plus offset) with no inter-program waiting."""
import torch
import triton
import triton.language as tl


@triton.jit
def block_sum_kernel(x_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def scan_sums_kernel(sums_ptr, excl_ptr, nb, BLOCK: tl.constexpr):
    carry = 0.0
    for start in range(0, nb, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < nb
        s = tl.load(sums_ptr + offs, mask=m, other=0.0)
        inc = tl.cumsum(s, axis=0)
        tl.store(excl_ptr + offs, inc - s + carry, mask=m)
        carry += tl.sum(s, axis=0)


@triton.jit
def block_scan_kernel(x_ptr, y_ptr, excl_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    prefix = tl.load(excl_ptr + pid)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0) + prefix, mask=mask)


def entry(x):
    n = x.numel()
    BLOCK = 4096
    nb = triton.cdiv(n, BLOCK)
    y = torch.empty_like(x)
    sums = torch.empty(nb, device=x.device, dtype=torch.float32)
    excl = torch.empty(nb, device=x.device, dtype=torch.float32)
    block_sum_kernel[(nb,)](x, sums, n, BLOCK=BLOCK, num_warps=8)
    scan_sums_kernel[(1,)](sums, excl, nb, BLOCK=1024, num_warps=4)
    block_scan_kernel[(nb,)](x, y, excl, n, BLOCK=BLOCK, num_warps=8)
    return y


def reference(x):
    return torch.cumsum(x.double(), dim=0).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["n"], generator=g, dtype=torch.float32).to(device),)


CASES = [{"n": 1 << 24}, {"n": 1 << 25}, {"n": 10_000_019}, {"n": 50_331_653}, {"n": 1 << 26}]
SMALL_CASES = [{"n": 20000}, {"n": 4097}]
TOLERANCES = {"float32": (0.25, 1e-3)}


def bytes_moved(case):
    return 8 * case["n"]


def flops(case):
    return case["n"]
