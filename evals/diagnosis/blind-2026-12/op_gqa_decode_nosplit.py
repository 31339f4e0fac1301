"""Single-token GQA decode attention over a contiguous KV cache [B, Hkv, S, D]; each program serves all query heads of one KV head. Planted: grid is only batch x kv_heads programs (no split-KV), each streaming the whole sequence."""
import math
import torch
import triton
import triton.language as tl


@triton.jit
def _gqa_decode_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, S,
                       stride_qb, stride_qh, stride_kb, stride_kh, stride_ks,
                       stride_vb, stride_vh, stride_vs, stride_ob, stride_oh,
                       GROUP: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr,
                       HEAD_DIM: tl.constexpr):
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    offs_g = tl.arange(0, BLOCK_G)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    gmask = offs_g < GROUP

    q_ptrs = q_ptr + b * stride_qb + (kvh * GROUP + offs_g)[:, None] * stride_qh + offs_d[None, :]
    q = tl.load(q_ptrs, mask=gmask[:, None], other=0.0)

    k_base = k_ptr + b * stride_kb + kvh * stride_kh
    v_base = v_ptr + b * stride_vb + kvh * stride_vh
    m_i = tl.full([BLOCK_G], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_G], dtype=tl.float32)
    acc = tl.zeros([BLOCK_G, HEAD_DIM], dtype=tl.float32)
    for start in range(0, S, BLOCK_N):
        n = start + offs_n
        nmask = n < S
        k = tl.load(k_base + n[:, None] * stride_ks + offs_d[None, :], mask=nmask[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale          # log2-domain scores
        qk = tl.where(nmask[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + n[:, None] * stride_vs + offs_d[None, :], mask=nmask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + (kvh * GROUP + offs_g)[:, None] * stride_oh + offs_d[None, :]
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=gmask[:, None])


def entry(q, k_cache, v_cache):
    B, Hq, D = q.shape
    _, Hkv, S, _ = k_cache.shape
    group = Hq // Hkv
    assert q.stride(-1) == 1 and k_cache.stride(-1) == 1 and v_cache.stride(-1) == 1
    out = torch.empty_like(q)
    qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634
    _gqa_decode_kernel[(B, Hkv)](
        q, k_cache, v_cache, out, qk_scale, S,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), out.stride(0), out.stride(1),
        GROUP=group, BLOCK_G=max(16, triton.next_power_of_2(group)), BLOCK_N=64, HEAD_DIM=D,
        num_warps=4, num_stages=3,
    )
    return out


def reference(q, k_cache, v_cache):
    B, Hq, D = q.shape
    Hkv = k_cache.shape[1]
    qf = q.float().view(B, Hkv, Hq // Hkv, D)
    s = torch.einsum("bhgd,bhsd->bhgs", qf, k_cache.float()) / math.sqrt(D)
    p = torch.softmax(s, dim=-1)
    o = torch.einsum("bhgs,bhsd->bhgd", p, v_cache.float())
    return o.reshape(B, Hq, D).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    q = torch.randn(B, Hq, D, generator=g).to(dtype)
    k = torch.randn(B, Hkv, S, D, generator=g).to(dtype)
    v = torch.randn(B, Hkv, S, D, generator=g).to(dtype)
    return q.to(device), k.to(device), v.to(device)


CASES = [
    {"B": 4, "Hq": 32, "Hkv": 8, "S": 32768, "D": 128, "dtype": "bfloat16"},
    {"B": 1, "Hq": 32, "Hkv": 8, "S": 131072, "D": 128, "dtype": "bfloat16"},
    {"B": 2, "Hq": 64, "Hkv": 8, "S": 50000, "D": 128, "dtype": "bfloat16"},
    {"B": 3, "Hq": 28, "Hkv": 4, "S": 40961, "D": 128, "dtype": "float16"},
]
SMALL_CASES = [
    {"B": 1, "Hq": 4, "Hkv": 2, "S": 100, "D": 32, "dtype": "float16"},
    {"B": 2, "Hq": 6, "Hkv": 2, "S": 257, "D": 64, "dtype": "float16"},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float16": (5e-3, 5e-3)}


def bytes_moved(case):
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    return 2 * (2 * B * Hkv * S * D + 2 * B * Hq * D)


def flops(case):
    return 4 * case["B"] * case["Hq"] * case["S"] * case["D"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
