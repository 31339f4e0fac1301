import torch
import triton
import triton.language as tl


@triton.jit
def split_heads_kernel(qkv_ptr, out_ptr, S, NH,
                       HEAD_D: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    # out[b, h, s, d] = qkv[b, s, h * D + d] for all q/k/v heads
    pid_s = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2)
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_s[:, None] < S) & (offs_d[None, :] < HEAD_D)
    src = (b * S + offs_s[:, None]) * (NH * HEAD_D) + h * HEAD_D + offs_d[None, :]
    dst = ((b * NH + h) * S + offs_s[:, None]) * HEAD_D + offs_d[None, :]
    x = tl.load(qkv_ptr + src, mask=mask)
    tl.store(out_ptr + dst, x, mask=mask)


def entry(qkv, n_heads, head_dim):
    B, S, _ = qkv.shape
    out = torch.empty((B, n_heads, S, head_dim), device=qkv.device, dtype=qkv.dtype)
    BLOCK_D = triton.next_power_of_2(head_dim)
    BLOCK_S = max(1, 4096 // BLOCK_D)
    grid = (triton.cdiv(S, BLOCK_S), n_heads, B)
    split_heads_kernel[grid](qkv, out, S, n_heads, HEAD_D=head_dim,
                             BLOCK_S=BLOCK_S, BLOCK_D=BLOCK_D, num_warps=4)
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
