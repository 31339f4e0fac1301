import math
import torch, triton, triton.language as tl


@triton.jit
def _decode_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, scale,
                        stride_qb, stride_qh, stride_kb, stride_kh, stride_ks,
                        stride_ob, stride_oh, D: tl.constexpr, BLOCK_S: tl.constexpr):
    # single-query attention for one (batch, head) over the whole KV cache
    b = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + d).to(tl.float32) * scale
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_kb + h * stride_kh
    m = float("-inf")
    l = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for t0 in range(0, S, BLOCK_S):
        t = t0 + tl.arange(0, BLOCK_S)
        tm = t < S
        k = tl.load(k_base + t[:, None] * stride_ks + d[None, :], mask=tm[:, None], other=0.0).to(tl.float32)
        s = tl.sum(q[None, :] * k, axis=1)
        s = tl.where(tm, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(v_base + t[:, None] * stride_ks + d[None, :], mask=tm[:, None], other=0.0).to(tl.float32)
        l = l * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m = m_new
    out = acc / l
    tl.store(o_ptr + b * stride_ob + h * stride_oh + d, out.to(o_ptr.dtype.element_ty))


def entry(q, k_cache, v_cache):
    # q: (B, H, D); k_cache, v_cache: (B, H, S, D)
    B, H, D = q.shape
    S = k_cache.shape[2]
    o = torch.empty_like(q)
    _decode_attn_kernel[(B, H)](q, k_cache, v_cache, o, S, 1.0 / math.sqrt(D),
                                q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                                o.stride(0), o.stride(1), D=D, BLOCK_S=64)
    return o


def reference(q, k_cache, v_cache):
    D = q.shape[-1]
    s = torch.einsum("bhd,bhsd->bhs", q.float(), k_cache.float()) / math.sqrt(D)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhs,bhsd->bhd", p, v_cache.float()).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, H, S, D = case["B"], case["H"], case["S"], case["D"]
    q = torch.randn(B, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    k = torch.randn(B, H, S, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    v = torch.randn(B, H, S, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    return q.to(device), k.to(device), v.to(device)


CASES = [
    {"B": 4, "H": 32, "S": 2048, "D": 128},
    {"B": 2, "H": 32, "S": 4000, "D": 128},
    {"B": 16, "H": 8, "S": 3000, "D": 128},
    {"B": 1, "H": 40, "S": 8192, "D": 128},
    {"B": 6, "H": 24, "S": 1500, "D": 128},
    {"B": 8, "H": 16, "S": 2500, "D": 64},
]
SMALL_CASES = [{"B": 2, "H": 2, "S": 50, "D": 32}, {"B": 1, "H": 3, "S": 77, "D": 64}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, H, S, D = case["B"], case["H"], case["S"], case["D"]
    return 2 * B * H * S * D * 2 + 2 * B * H * D * 2


def flops(case):
    B, H, S, D = case["B"], case["H"], case["S"], case["D"]
    return 4 * B * H * S * D
