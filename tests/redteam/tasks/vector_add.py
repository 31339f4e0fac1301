"""Red-team task: element-wise vector add (a copy of examples/vector_add.py with three small interpreter cases)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def entry(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out


def reference(x, y):
    return x + y


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    n = case["n"]
    return (torch.randn(n, device=device, generator=g), torch.randn(n, device=device, generator=g))


CASES = [{"n": 1 << 24}, {"n": 98_432}, {"n": 1_000_003}, {"n": 1 << 26}, {"n": 33_554_431}]
HELD_OUT = [{"n": 4_194_305}, {"n": 12_345_678}]
SMALL_CASES = [{"n": 1}, {"n": 1000}, {"n": 4097}]


def bytes_moved(case):
    return 3 * 4 * case["n"]


def flops(case):
    return case["n"]
