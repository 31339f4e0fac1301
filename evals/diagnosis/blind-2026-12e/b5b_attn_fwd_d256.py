import math
import torch, triton, triton.language as tl


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, sm_scale,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # causal attention forward for one (query block, batch*head)
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * S * HEAD_DIM
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
                mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < S
        k = tl.load(k_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        keep = (offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < S)
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


def entry(q, k, v):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 128, 64
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    attn_fwd_kernel[grid](q, k, v, o, S, 1.0 / math.sqrt(D), HEAD_DIM=D,
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4, num_stages=2)
    return o


def reference(q, k, v):
    o = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    return o.to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    q = torch.randn(shape, generator=g).to(torch.float16)
    k = torch.randn(shape, generator=g).to(torch.float16)
    v = torch.randn(shape, generator=g).to(torch.float16)
    return (q.to(device), k.to(device), v.to(device))


CASES = [
    {"B": 2, "H": 8, "S": 2048, "D": 256},
    {"B": 1, "H": 16, "S": 3072, "D": 256},
    {"B": 4, "H": 4, "S": 1536, "D": 256},
    {"B": 2, "H": 10, "S": 2500, "D": 256},
    {"B": 1, "H": 8, "S": 4096, "D": 256},
]
SMALL_CASES = [{"B": 1, "H": 2, "S": 40, "D": 256}, {"B": 1, "H": 1, "S": 150, "D": 256}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    return 4 * case["B"] * case["H"] * case["S"] * case["D"] * 2


def flops(case):
    return 2 * case["B"] * case["H"] * case["S"] * case["S"] * case["D"]


DTYPE_FLOPS = "fp16"
