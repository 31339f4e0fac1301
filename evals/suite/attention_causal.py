"""Causal self-attention forward, softmax(Q K^T / sqrt(D)) V, on [batch, heads, seq, head_dim] tensors. Family: attention.

First pass (flash-style, untuned): one program per 64-query block and (batch, head), a loop over 64-key
blocks with an online softmax in fp32 (natural exp); keys past the query block are skipped and the diagonal block is masked.
Head dims that are not powers of two are padded to the next one with masked loads."""

import torch
import triton
import triton.language as tl

FAMILY = "attention"
CAUSAL = True


@triton.jit
def attention_causal_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, D, sm_scale, CAUSAL: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1).to(tl.int64) * S * D
    rm = start_m + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=(rm[:, None] < S) & (rd[None, :] < D), other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    end_n = tl.minimum(start_m + BLOCK_M, S) if CAUSAL else S
    for start_n in range(0, end_n, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (rn[:, None] < S) & (rd[None, :] < D)
        k = tl.load(k_ptr + base + rn[:, None] * D + rd[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        keep = rn[None, :] < S
        if CAUSAL:
            keep = keep & (rn[None, :] <= rm[:, None])
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], o.to(o_ptr.dtype.element_ty),
             mask=(rm[:, None] < S) & (rd[None, :] < D))


def entry(q, k, v):
    Z, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 64), Z * H)
    attention_causal_kernel[grid](q, k, v, o, S, D, 1.0 / D ** 0.5, CAUSAL=CAUSAL,
                   BLOCK_M=64, BLOCK_N=64, BLOCK_D=max(16, triton.next_power_of_2(D)))
    return o


def reference(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=CAUSAL)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, case["dtype"])
    shape = (case["Z"], case["H"], case["S"], case["D"])
    return tuple(torch.randn(shape, generator=g).to(dtype).to(device) for _ in range(3))


CASES = [
    {"Z": 4, "H": 32, "S": 2048, "D": 128, "dtype": "float16"},
    {"Z": 1, "H": 32, "S": 8192, "D": 128, "dtype": "bfloat16"},
    {"Z": 8, "H": 16, "S": 1023, "D": 64, "dtype": "float16"},
    {"Z": 2, "H": 20, "S": 4097, "D": 64, "dtype": "bfloat16"},
    {"Z": 16, "H": 12, "S": 777, "D": 80, "dtype": "float16"},
]
HELD_OUT = [{"Z": 3, "H": 24, "S": 1500, "D": 128, "dtype": "bfloat16"}, {"Z": 6, "H": 8, "S": 3001, "D": 64, "dtype": "float16"}]
SMALL_CASES = [{"Z": 1, "H": 2, "S": 77, "D": 16, "dtype": "float16"}, {"Z": 2, "H": 1, "S": 33, "D": 24, "dtype": "float16"}]
TOLERANCES = {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def flops(case):
    full = 4 * case["Z"] * case["H"] * case["S"] * case["S"] * case["D"]
    return full // 2 if CAUSAL else full


def bytes_moved(case):
    return 4 * case["Z"] * case["H"] * case["S"] * case["D"] * getattr(torch, case["dtype"]).itemsize
