"""Full sum of a large vector. Planted: every program adds each block's partial sum into the one
output scalar with an atomic inside its loop, so all programs contend for one address."""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BLOCKS_PER_PROGRAM: tl.constexpr):
    base = tl.program_id(0) * BLOCK * BLOCKS_PER_PROGRAM
    for i in range(0, BLOCKS_PER_PROGRAM):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def entry(x):
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    sum_kernel[(triton.cdiv(n, 1024 * 16),)](x, out, n, BLOCK=1024, BLOCKS_PER_PROGRAM=16)
    return out


def reference(x):
    return x.sum().reshape(1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["n"], generator=g).to(device),)


CASES = [{"n": 1 << 26}, {"n": 100_000_007}, {"n": 1 << 24}, {"n": 33_554_431}, {"n": 1 << 27}]
SMALL_CASES = [{"n": 5000}, {"n": 40_000}]
TOLERANCES = {"float32": (1e-1, 1e-3)}


def bytes_moved(case):
    return 4 * case["n"]
