import torch
import triton
import triton.language as tl


@triton.jit
def split_heads_kernel(qkv_ptr, out_ptr, n_elements, S, NH, D,
                       BLOCK: tl.constexpr):
    # out[b, h, s, d] = qkv[b, s, h * D + d] for all q/k/v heads
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    d = offs % D
    r = offs // D
    s = r % S
    r = r // S
    h = r % NH
    b = r // NH
    src = ((b * S + s) * NH + h) * D + d
    x = tl.load(qkv_ptr + src, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def entry(qkv, n_heads, head_dim):
    B, S, _ = qkv.shape
    out = torch.empty((B, n_heads, S, head_dim), device=qkv.device, dtype=qkv.dtype)
    n = out.numel()
    BLOCK = 1024
    split_heads_kernel[(triton.cdiv(n, BLOCK),)](qkv, out, n, S, n_heads, head_dim,
                                                 BLOCK=BLOCK, num_warps=4)
    return out


def reference(qkv, n_heads, head_dim):
    B, S, _ = qkv.shape
    return qkv.view(B, S, n_heads, head_dim).transpose(1, 2).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, S, NH, D = case["b"], case["s"], case["nh"], case["d"]
    qkv = torch.randn(B, S, NH * D, generator=g)
    return qkv.to(torch.bfloat16).to(device), NH, D


# nh counts q, k and v heads
CASES = [
    {"b": 8, "s": 4096, "nh": 24, "d": 40},
    {"b": 64, "s": 256, "nh": 48, "d": 72},
    {"b": 64, "s": 257, "nh": 48, "d": 88},
    {"b": 4, "s": 9216, "nh": 24, "d": 40},
    {"b": 16, "s": 1024, "nh": 48, "d": 72},
    {"b": 48, "s": 577, "nh": 36, "d": 88},
]
SMALL_CASES = [{"b": 2, "s": 10, "nh": 6, "d": 40}, {"b": 1, "s": 7, "nh": 3, "d": 72}]


def bytes_moved(case):
    return 2 * 2 * case["b"] * case["s"] * case["nh"] * case["d"]


def flops(case):
    return 0
