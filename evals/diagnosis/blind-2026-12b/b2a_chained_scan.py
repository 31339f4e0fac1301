"""Inclusive prefix sum (cumsum) of a long fp32 vector; planted: single-pass chained scan where each block spins until its predecessor publishes its running total, serializing all programs."""
import torch
import triton
import triton.language as tl


@triton.jit
def chained_scan_kernel(x_ptr, y_ptr, carry_ptr, flag_ptr, counter_ptr, n, BLOCK: tl.constexpr):
    # dynamic block id so that predecessors are always already running
    bid = tl.atomic_add(counter_ptr, 1)
    offs = bid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    local = tl.cumsum(x, axis=0)
    total = tl.sum(x, axis=0)
    prefix = 0.0
    if bid > 0:
        while tl.atomic_add(flag_ptr + bid - 1, 0) == 0:
            pass
        prefix = tl.load(carry_ptr + bid - 1, volatile=True)
    tl.store(carry_ptr + bid, prefix + total)
    tl.debug_barrier()
    tl.atomic_xchg(flag_ptr + bid, 1)
    tl.store(y_ptr + offs, local + prefix, mask=mask)


def entry(x):
    n = x.numel()
    BLOCK = 4096
    nb = triton.cdiv(n, BLOCK)
    y = torch.empty_like(x)
    carry = torch.zeros(nb, device=x.device, dtype=torch.float32)
    flags = torch.zeros(nb, device=x.device, dtype=torch.int32)
    counter = torch.zeros(1, device=x.device, dtype=torch.int32)
    chained_scan_kernel[(nb,)](x, y, carry, flags, counter, n, BLOCK=BLOCK, num_warps=8)
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
