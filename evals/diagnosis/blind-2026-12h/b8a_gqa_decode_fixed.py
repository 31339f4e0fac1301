import math
import torch, triton, triton.language as tl


@triton.jit
def _gqa_decode_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale,
                       stride_qb, stride_qh, stride_kb, stride_kh, stride_ks,
                       stride_ob, stride_oh,
                       GROUP: tl.constexpr, GROUP_PAD: tl.constexpr,
                       HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    # single-token decode attention over the whole KV cache (grouped-query heads)
    kvh = tl.program_id(0)
    b = tl.program_id(1)
    offs_g = tl.arange(0, GROUP_PAD)
    gmask = offs_g < GROUP
    heads = kvh * GROUP + offs_g
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=gmask[:, None], other=0.0)
    k_base = k_ptr + b.to(tl.int64) * stride_kb + kvh * stride_kh
    v_base = v_ptr + b.to(tl.int64) * stride_kb + kvh * stride_kh

    m_i = tl.full([GROUP_PAD], float("-inf"), tl.float32)
    l_i = tl.zeros([GROUP_PAD], dtype=tl.float32)
    acc = tl.zeros([GROUP_PAD, HEAD_DIM], dtype=tl.float32)
    for start in range(0, S, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        nmask = offs_n < S
        kt = tl.load(k_base + offs_n[None, :] * stride_ks + offs_d[:, None], mask=nmask[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale
        s = tl.where(nmask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + offs_n[:, None] * stride_ks + offs_d[None, :], mask=nmask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * stride_ob + heads[:, None] * stride_oh + offs_d[None, :],
             out.to(o_ptr.dtype.element_ty), mask=gmask[:, None])


def entry(q, k_cache, v_cache):
    # q: [B, HQ, D]; k_cache, v_cache: [B, HKV, S, D]
    B, HQ, D = q.shape
    _, HKV, S, _ = k_cache.shape
    group = HQ // HKV
    o = torch.empty_like(q)
    qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634
    _gqa_decode_kernel[(HKV, B)](
        q, k_cache, v_cache, o, S, qk_scale,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        o.stride(0), o.stride(1),
        GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)),
        HEAD_DIM=D, BLOCK_N=64, num_warps=4)
    return o


def reference(q, k_cache, v_cache):
    B, HQ, D = q.shape
    HKV = k_cache.shape[1]
    group = HQ // HKV
    k = k_cache.float().repeat_interleave(group, dim=1)
    v = v_cache.float().repeat_interleave(group, dim=1)
    s = torch.einsum("bhd,bhsd->bhs", q.float(), k) / math.sqrt(D)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhs,bhsd->bhd", p, v).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, HQ, HKV, S, D = case["B"], case["HQ"], case["HKV"], case["S"], case["D"]
    q = torch.randn((B, HQ, D), generator=g, dtype=torch.float32)
    k = torch.randn((B, HKV, S, D), generator=g, dtype=torch.float32)
    v = torch.randn((B, HKV, S, D), generator=g, dtype=torch.float32)
    return (q.to(torch.float16).to(device), k.to(torch.float16).to(device), v.to(torch.float16).to(device))


CASES = [
    {"B": 32, "HQ": 64, "HKV": 8, "S": 4096, "D": 128},
    {"B": 64, "HQ": 32, "HKV": 8, "S": 2048, "D": 128},
    {"B": 48, "HQ": 28, "HKV": 4, "S": 3000, "D": 128},
    {"B": 40, "HQ": 40, "HKV": 8, "S": 1500, "D": 128},
    {"B": 16, "HQ": 32, "HKV": 8, "S": 8192, "D": 128},
    {"B": 96, "HQ": 32, "HKV": 4, "S": 1000, "D": 128},
]
SMALL_CASES = [{"B": 2, "HQ": 8, "HKV": 2, "S": 77, "D": 32}, {"B": 1, "HQ": 6, "HKV": 2, "S": 50, "D": 16}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, HQ, HKV, S, D = case["B"], case["HQ"], case["HKV"], case["S"], case["D"]
    return 2 * (2 * B * HKV * S * D + 2 * B * HQ * D)


def flops(case):
    B, HQ, S, D = case["B"], case["HQ"], case["S"], case["D"]
    return 4 * B * HQ * S * D
