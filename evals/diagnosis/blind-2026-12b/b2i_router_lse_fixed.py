"""Row-wise logsumexp of bf16 MoE router logits [T, E] (small E); fixed: loads a [BLOCK_M, E] tile at once and reduces it with tl.max / tl.sum along the row."""
import torch
import triton
import triton.language as tl


@triton.jit
def router_lse_kernel(x_ptr, out_ptr, T, E, BLOCK_M: tl.constexpr, BLOCK_E: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_E)
    rmask = rows < T
    mask = rmask[:, None] & (cols < E)[None, :]
    ptrs = x_ptr + rows.to(tl.int64)[:, None] * E + cols[None, :]
    v = tl.load(ptrs, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(v, axis=1)
    s = tl.sum(tl.exp(v - m[:, None]), axis=1)
    tl.store(out_ptr + rows, m + tl.log(s), mask=rmask)


def entry(logits):
    T, E = logits.shape
    out = torch.empty(T, device=logits.device, dtype=torch.float32)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_M = max(1, 4096 // BLOCK_E)
    router_lse_kernel[(triton.cdiv(T, BLOCK_M),)](logits, out, T, E, BLOCK_M=BLOCK_M, BLOCK_E=BLOCK_E,
                                                  num_warps=4)
    return out


def reference(logits):
    return torch.logsumexp(logits.float(), dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, E = case["shape"]
    x = (torch.randn(T, E, generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    return (x.to(device),)


# MoE router logits: many tokens, small expert dimension
CASES = [
    {"shape": [524288, 128]},
    {"shape": [1000003, 64]},
    {"shape": [262147, 256]},
    {"shape": [400000, 160]},
    {"shape": [786431, 96]},
]
SMALL_CASES = [{"shape": [77, 20]}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    T, E = case["shape"]
    return 2 * T * E + 4 * T


def flops(case):
    T, E = case["shape"]
    return 4 * T * E
