"""fp16 flash-attention forward softmax(Q K^T * scale) V (non-causal); planted: tiny 16x32 query/key tiles, so each program re-streams K/V for 16 queries and issues minimal MMAs."""
import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, sm_scale,
                    stride_b, stride_h, stride_n, H,
                    D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    base = b * stride_b + h * stride_h
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = cols[:, None] < N
        k = tl.load(k_ptr + base + cols[:, None] * stride_n + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * stride_n + offs_d[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(cols[None, :] < N, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < N)


def entry(q, k, v):
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 16, 32   # small tiles -> many programs, keeps every SM busy
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    attn_fwd_kernel[grid](q, k, v, o, N, D ** -0.5, q.stride(0), q.stride(1), q.stride(2), H,
                          D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=2, num_stages=2)
    return o


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float()).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, H, N, D = case["B"], case["H"], case["N"], case["D"]
    q, k, v = (torch.randn(B, H, N, D, generator=g, dtype=torch.float32).to(torch.float16) for _ in range(3))
    return (q.to(device), k.to(device), v.to(device))


CASES = [
    {"B": 4, "H": 32, "N": 2048, "D": 64},
    {"B": 2, "H": 16, "N": 4096, "D": 64},
    {"B": 8, "H": 12, "N": 1000, "D": 64},
    {"B": 2, "H": 24, "N": 3001, "D": 128},
    {"B": 1, "H": 32, "N": 8192, "D": 128},
]
SMALL_CASES = [{"B": 1, "H": 2, "N": 77, "D": 32}]
TOLERANCES = {"float16": (1e-2, 1e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    B, H, N, D = case["B"], case["H"], case["N"], case["D"]
    return 2 * 4 * B * H * N * D


def flops(case):
    B, H, N, D = case["B"], case["H"], case["N"], case["D"]
    return 4 * B * H * N * N * D
