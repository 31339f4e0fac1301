"""GPT-J style (interleaved pairs) rotary embedding applied to q [T, Hq, D] and k [T, Hk, D] in bf16 with a cos/sin cache indexed by position. Planted: even/odd lanes are loaded and stored through stride-2 pointers, so accesses are 2-byte and scattered across heads (uncoalesced)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rope_interleaved_kernel(
    q_ptr, k_ptr, q_out_ptr, k_out_ptr, pos_ptr, cos_sin_ptr,
    n_q_heads, n_k_heads,
    stride_qt, stride_qh, stride_kt, stride_kh,
    stride_oqt, stride_oqh, stride_okt, stride_okh,
    stride_cache,
    HALF: tl.constexpr, BLOCK_HQ: tl.constexpr, BLOCK_HK: tl.constexpr,
):
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    i = tl.arange(0, HALF)
    cos = tl.load(cos_sin_ptr + pos * stride_cache + i)[None, :]
    sin = tl.load(cos_sin_ptr + pos * stride_cache + HALF + i)[None, :]

    # q heads: rotate pairs (x[2i], x[2i+1])
    hq = tl.arange(0, BLOCK_HQ)
    mq = (hq < n_q_heads)[:, None]
    q_even = q_ptr + t * stride_qt + hq[:, None] * stride_qh + 2 * i[None, :]
    q0 = tl.load(q_even, mask=mq, other=0.0).to(tl.float32)
    q1 = tl.load(q_even + 1, mask=mq, other=0.0).to(tl.float32)
    oq_even = q_out_ptr + t * stride_oqt + hq[:, None] * stride_oqh + 2 * i[None, :]
    tl.store(oq_even, (q0 * cos - q1 * sin).to(q_out_ptr.dtype.element_ty), mask=mq)
    tl.store(oq_even + 1, (q1 * cos + q0 * sin).to(q_out_ptr.dtype.element_ty), mask=mq)

    # k heads
    hk = tl.arange(0, BLOCK_HK)
    mk = (hk < n_k_heads)[:, None]
    k_even = k_ptr + t * stride_kt + hk[:, None] * stride_kh + 2 * i[None, :]
    k0 = tl.load(k_even, mask=mk, other=0.0).to(tl.float32)
    k1 = tl.load(k_even + 1, mask=mk, other=0.0).to(tl.float32)
    ok_even = k_out_ptr + t * stride_okt + hk[:, None] * stride_okh + 2 * i[None, :]
    tl.store(ok_even, (k0 * cos - k1 * sin).to(k_out_ptr.dtype.element_ty), mask=mk)
    tl.store(ok_even + 1, (k1 * cos + k0 * sin).to(k_out_ptr.dtype.element_ty), mask=mk)


def entry(q, k, positions, cos_sin_cache):
    T, Hq, D = q.shape
    Hk = k.shape[1]
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    _rope_interleaved_kernel[(T,)](
        q, k, q_out, k_out, positions, cos_sin_cache,
        Hq, Hk,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1),
        q_out.stride(0), q_out.stride(1), k_out.stride(0), k_out.stride(1),
        cos_sin_cache.stride(0),
        HALF=D // 2, BLOCK_HQ=triton.next_power_of_2(Hq), BLOCK_HK=triton.next_power_of_2(Hk),
        num_warps=4,
    )
    return q_out, k_out


def reference(q, k, positions, cos_sin_cache):
    D = q.shape[-1]
    cs = cos_sin_cache[positions]  # [T, D]
    cos = cs[:, : D // 2].unsqueeze(1)
    sin = cs[:, D // 2:].unsqueeze(1)

    def rot(x):
        xf = x.float()
        x0, x1 = xf[..., 0::2], xf[..., 1::2]
        out = torch.stack((x0 * cos - x1 * sin, x1 * cos + x0 * sin), dim=-1)
        return out.flatten(-2).to(x.dtype)

    return rot(q), rot(k)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, Hq, Hk, D = case["T"], case["Hq"], case["Hk"], case["D"]
    max_pos = case.get("max_pos", 8192)
    q = torch.randn(T, Hq, D, generator=g).to(torch.bfloat16)
    k = torch.randn(T, Hk, D, generator=g).to(torch.bfloat16)
    positions = torch.randint(0, max_pos, (T,), generator=g, dtype=torch.int64)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    freqs = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv_freq[None, :]
    cos_sin_cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).contiguous()
    return q.to(device), k.to(device), positions.to(device), cos_sin_cache.to(device)


CASES = [
    {"T": 16384, "Hq": 32, "Hk": 8, "D": 128},
    {"T": 20000, "Hq": 28, "Hk": 4, "D": 128},
    {"T": 8191, "Hq": 64, "Hk": 8, "D": 128},
    {"T": 65536, "Hq": 16, "Hk": 16, "D": 64},
]

SMALL_CASES = [
    {"T": 5, "Hq": 4, "Hk": 2, "D": 32, "max_pos": 64},
    {"T": 9, "Hq": 6, "Hk": 3, "D": 64, "max_pos": 128},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, Hq, Hk, D = case["T"], case["Hq"], case["Hk"], case["D"]
    return T * (Hq + Hk) * D * 2 * 2 + T * (8 + D * 4)


def flops(case):
    return case["T"] * (case["Hq"] + case["Hk"]) * case["D"] * 3

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
