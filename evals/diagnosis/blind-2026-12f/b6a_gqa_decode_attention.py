import math
import torch, triton, triton.language as tl


@triton.jit
def _decode_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, sm_scale,
                        stride_qb, stride_qh,
                        stride_kb, stride_kh, stride_ks,
                        stride_vb, stride_vh, stride_vs,
                        stride_ob, stride_oh,
                        GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    # single-token decode: one program per (batch, query head)
    b = tl.program_id(0)
    h = tl.program_id(1)
    kvh = h // GROUP
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_d).to(tl.float32) * sm_scale
    k_base = k_ptr + b * stride_kb + kvh * stride_kh
    v_base = v_ptr + b * stride_vb + kvh * stride_vh

    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.full([1], 0.0, tl.float32)
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for start in range(0, S, BLOCK_N):
        n = start + offs_n
        mask_n = n < S
        k = tl.load(k_base + n[:, None] * stride_ks + offs_d[None, :],
                    mask=mask_n[:, None], other=0.0).to(tl.float32)
        s = tl.sum(q[None, :] * k, axis=1)
        s = tl.where(mask_n, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(v_base + n[:, None] * stride_vs + offs_d[None, :],
                    mask=mask_n[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    out = acc / l_i
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d, out.to(o_ptr.dtype.element_ty))


def entry(q, k_cache, v_cache):
    # q: [B, Hq, D]; k_cache, v_cache: [B, Hkv, S, D]; returns [B, Hq, D]
    B, Hq, D = q.shape
    _, Hkv, S, _ = k_cache.shape
    o = torch.empty_like(q)
    grid = (B, Hq)
    _decode_attn_kernel[grid](
        q, k_cache, v_cache, o, S, 1.0 / math.sqrt(D),
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        o.stride(0), o.stride(1),
        GROUP=Hq // Hkv, HEAD_DIM=D, BLOCK_N=64, num_warps=4)
    return o


def reference(q, k_cache, v_cache):
    B, Hq, D = q.shape
    Hkv = k_cache.shape[1]
    G = Hq // Hkv
    k = k_cache.float().repeat_interleave(G, dim=1)
    v = v_cache.float().repeat_interleave(G, dim=1)
    s = torch.einsum("bhd,bhsd->bhs", q.float(), k) / math.sqrt(D)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhs,bhsd->bhd", p, v).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    q = torch.randn(B, Hq, D, generator=g).to(torch.float16)
    k = torch.randn(B, Hkv, S, D, generator=g).to(torch.float16)
    v = torch.randn(B, Hkv, S, D, generator=g).to(torch.float16)
    return q.to(device), k.to(device), v.to(device)


CASES = [
    {"B": 32, "Hq": 32, "Hkv": 8, "S": 2048, "D": 128},
    {"B": 16, "Hq": 64, "Hkv": 8, "S": 3000, "D": 128},
    {"B": 64, "Hq": 32, "Hkv": 4, "S": 1500, "D": 128},
    {"B": 40, "Hq": 28, "Hkv": 4, "S": 1777, "D": 128},
    {"B": 24, "Hq": 32, "Hkv": 8, "S": 4097, "D": 64},
]
SMALL_CASES = [{"B": 2, "Hq": 8, "Hkv": 2, "S": 150, "D": 64},
               {"B": 1, "Hq": 7, "Hkv": 1, "S": 77, "D": 32}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    B, Hq, Hkv, S, D = case["B"], case["Hq"], case["Hkv"], case["S"], case["D"]
    return 2 * B * Hkv * S * D * 2 + 2 * B * Hq * D * 2


def flops(case):
    B, Hq, S, D = case["B"], case["Hq"], case["S"], case["D"]
    return 4 * B * Hq * S * D
