"""Fixed: 128x64 tiles on 8 warps, which fit in registers."""

import torch
import triton
import triton.language as tl



@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    bh = tl.program_id(1)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    base = bh * S * D
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    for start in range(0, S, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None], mask=rn[None, :] < S, other=0.0)
        s = tl.dot(q, k) * scale
        s = tl.where(rn[None, :] < S, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], o.to(o_ptr.dtype.element_ty), mask=rm[:, None] < S)


def entry(q, k, v):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    attention_kernel[(triton.cdiv(S, 128), B * H)](q, k, v, o, S, D ** -0.5, D=D, BLOCK_M=128, BLOCK_N=64,
                                                    num_warps=8, num_stages=2)
    return o
