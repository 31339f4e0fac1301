import math
import torch, triton, triton.language as tl


@triton.jit
def causal_attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, S, H,
                           stride_b, stride_h, stride_s,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    # causal softmax(q k^T * scale) v for one query block of one (batch, head)
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    base = (off_bh // H).to(tl.int64) * stride_b + (off_bh % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
                mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)

    for start_n in range(0, S, BLOCK_N):
        if start_n < (start_m + 1) * BLOCK_M:
            cols = start_n + offs_n
            k = tl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None],
                        mask=cols[None, :] < S, other=0.0)
            qk = tl.dot(q, k) * qk_scale
            keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
            qk = tl.where(keep, qk, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(qk - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :],
                        mask=cols[:, None] < S, other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
             acc.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def entry(q, k, v):
    # q, k, v: [B, H, S, D] fp16, contiguous
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 128, 64
    qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    causal_attn_fwd_kernel[grid](q, k, v, o, qk_scale, S, H,
                                 q.stride(0), q.stride(1), q.stride(2),
                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_DIM=D,
                                 num_warps=8, num_stages=3)
    return o


def reference(q, k, v):
    D = q.shape[-1]
    s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(D)
    S = q.shape[2]
    causal = torch.ones((S, S), dtype=torch.bool, device=q.device).tril()
    s = s.masked_fill(~causal, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    q = torch.randn(shape, generator=g, dtype=torch.float32).to(torch.float16)
    k = torch.randn(shape, generator=g, dtype=torch.float32).to(torch.float16)
    v = torch.randn(shape, generator=g, dtype=torch.float32).to(torch.float16)
    return q.to(device), k.to(device), v.to(device)


CASES = [
    {"B": 4, "H": 32, "S": 4096, "D": 128},
    {"B": 2, "H": 32, "S": 8192, "D": 128},
    {"B": 8, "H": 16, "S": 2048, "D": 128},
    {"B": 4, "H": 32, "S": 3000, "D": 128},
    {"B": 16, "H": 12, "S": 1536, "D": 128},
    {"B": 1, "H": 40, "S": 6000, "D": 128},
]
SMALL_CASES = [{"B": 1, "H": 2, "S": 200, "D": 32}, {"B": 2, "H": 1, "S": 70, "D": 16}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    return 2 * 4 * case["B"] * case["H"] * case["S"] * case["D"]


def flops(case):
    B, H, S, D = case["B"], case["H"], case["S"], case["D"]
    return 2 * B * H * S * S * D


DTYPE_FLOPS = "fp16"
