import math
import torch, triton, triton.language as tl


# One decode step of grouped-query attention against a dense KV cache.
# q: (B, Hq, D), k/v cache: (B, S, Hkv, D), Hq = GROUP * Hkv.

@triton.jit
def _decode_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, sm_scale,
                        stride_qb, stride_qh, stride_kb, stride_ks, stride_kh,
                        stride_ob, stride_oh,
                        NUM_KV_HEADS: tl.constexpr, GROUP: tl.constexpr, BLOCK_G: tl.constexpr,
                        HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // NUM_KV_HEADS
    kvh = pid % NUM_KV_HEADS
    d = tl.arange(0, HEAD_DIM)
    g = tl.arange(0, BLOCK_G)
    g_mask = g < GROUP
    h = kvh * GROUP + g

    q = tl.load(q_ptr + b * stride_qb + h[:, None] * stride_qh + d[None, :],
                mask=g_mask[:, None], other=0.0)
    k_base = k_ptr + b * stride_kb + kvh * stride_kh
    v_base = v_ptr + b * stride_kb + kvh * stride_kh

    m_i = tl.full((BLOCK_G,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_G,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_G, HEAD_DIM), dtype=tl.float32)
    for start in range(0, S, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        mask = n < S
        kt = tl.load(k_base + n[None, :] * stride_ks + d[:, None], mask=mask[None, :], other=0.0)
        s = tl.dot(q, kt) * sm_scale
        s = tl.where(mask[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + n[:, None] * stride_ks + d[None, :], mask=mask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_ptr + b * stride_ob + h[:, None] * stride_oh + d[None, :],
             out.to(o_ptr.dtype.element_ty), mask=g_mask[:, None])


def entry(q, k_cache, v_cache):
    B, Hq, D = q.shape
    _, S, Hkv, _ = k_cache.shape
    group = Hq // Hkv
    o = torch.empty_like(q)
    _decode_attn_kernel[(B * Hkv,)](
        q, k_cache, v_cache, o, S, 1.0 / math.sqrt(D),
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        o.stride(0), o.stride(1),
        NUM_KV_HEADS=Hkv, GROUP=group, BLOCK_G=max(16, triton.next_power_of_2(group)),
        HEAD_DIM=D, BLOCK_N=64, num_warps=4)
    return o


def reference(q, k_cache, v_cache):
    B, Hq, D = q.shape
    Hkv = k_cache.shape[2]
    k = k_cache.float().repeat_interleave(Hq // Hkv, dim=2)  # (B, S, Hq, D)
    v = v_cache.float().repeat_interleave(Hq // Hkv, dim=2)
    s = torch.einsum("bhd,bshd->bhs", q.float(), k) / math.sqrt(D)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhs,bshd->bhd", p, v).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    q = torch.randn(B, Hq, D, generator=g).to(torch.float16)
    k = torch.randn(B, S, Hkv, D, generator=g).to(torch.float16)
    v = torch.randn(B, S, Hkv, D, generator=g).to(torch.float16)
    return q.to(device), k.to(device), v.to(device)


CASES = [
    {"B": 32, "Hq": 32, "Hkv": 8, "S": 4096, "D": 128},
    {"B": 64, "Hq": 32, "Hkv": 4, "S": 2048, "D": 128},
    {"B": 40, "Hq": 28, "Hkv": 4, "S": 3000, "D": 128},
    {"B": 24, "Hq": 64, "Hkv": 8, "S": 5000, "D": 128},
    {"B": 48, "Hq": 32, "Hkv": 8, "S": 2500, "D": 128},
    {"B": 20, "Hq": 40, "Hkv": 8, "S": 6000, "D": 128},
]
SMALL_CASES = [{"B": 2, "Hq": 8, "Hkv": 2, "S": 150, "D": 64}, {"B": 1, "Hq": 6, "Hkv": 2, "S": 70, "D": 32}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    return 2 * (2 * B * S * Hkv * D + 2 * B * Hq * D)


def flops(case):
    B, Hq, S, D = case["B"], case["Hq"], case["S"], case["D"]
    return 4 * B * Hq * S * D
