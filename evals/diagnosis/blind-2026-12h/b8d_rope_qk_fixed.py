import torch, triton, triton.language as tl


@triton.jit
def rope_kernel(q_ptr, k_ptr, pos_ptr, cos_sin_ptr, q_out_ptr, k_out_ptr,
                stride_qt, stride_qh, stride_kt, stride_kh, stride_cs,
                NUM_Q_HEADS, NUM_K_HEADS, HALF: tl.constexpr,
                BLOCK_HQ: tl.constexpr, BLOCK_HK: tl.constexpr):
    # rotate-half rotary embedding for all q and k heads of one token
    t = tl.program_id(0)
    offs = tl.arange(0, HALF)
    pos = tl.load(pos_ptr + t)
    cos = tl.load(cos_sin_ptr + pos * stride_cs + offs)[None, :]
    sin = tl.load(cos_sin_ptr + pos * stride_cs + HALF + offs)[None, :]

    hq = tl.arange(0, BLOCK_HQ)
    qmask = (hq < NUM_Q_HEADS)[:, None]
    q_off = t * stride_qt + hq[:, None] * stride_qh + offs[None, :]
    x1 = tl.load(q_ptr + q_off, mask=qmask, other=0.0).to(tl.float32)
    x2 = tl.load(q_ptr + q_off + HALF, mask=qmask, other=0.0).to(tl.float32)
    tl.store(q_out_ptr + q_off, (x1 * cos - x2 * sin).to(q_out_ptr.dtype.element_ty), mask=qmask)
    tl.store(q_out_ptr + q_off + HALF, (x2 * cos + x1 * sin).to(q_out_ptr.dtype.element_ty), mask=qmask)

    hk = tl.arange(0, BLOCK_HK)
    kmask = (hk < NUM_K_HEADS)[:, None]
    k_off = t * stride_kt + hk[:, None] * stride_kh + offs[None, :]
    y1 = tl.load(k_ptr + k_off, mask=kmask, other=0.0).to(tl.float32)
    y2 = tl.load(k_ptr + k_off + HALF, mask=kmask, other=0.0).to(tl.float32)
    tl.store(k_out_ptr + k_off, (y1 * cos - y2 * sin).to(k_out_ptr.dtype.element_ty), mask=kmask)
    tl.store(k_out_ptr + k_off + HALF, (y2 * cos + y1 * sin).to(k_out_ptr.dtype.element_ty), mask=kmask)


def entry(q, k, positions, cos_sin_cache):
    # q: [T, Hq, D], k: [T, Hk, D] (bf16), positions: [T] int64,
    # cos_sin_cache: [max_pos, D] fp32 holding cos in [:D/2] and sin in [D/2:]
    T, Hq, D = q.shape
    Hk = k.shape[1]
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    rope_kernel[(T,)](
        q, k, positions, cos_sin_cache, q_out, k_out,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), cos_sin_cache.stride(0),
        Hq, Hk, HALF=D // 2,
        BLOCK_HQ=triton.next_power_of_2(Hq), BLOCK_HK=triton.next_power_of_2(Hk))
    return q_out, k_out


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def reference(q, k, positions, cos_sin_cache):
    half = q.shape[-1] // 2
    cs = cos_sin_cache[positions]
    cos, sin = cs[:, None, :half], cs[:, None, half:]
    return _rotate(q, cos, sin), _rotate(k, cos, sin)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    T, Hq, Hk, D = case["T"], case["Hq"], case["Hk"], case["D"]
    max_pos = case.get("max_pos", 8192)
    q = torch.randn((T, Hq, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    k = torch.randn((T, Hk, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    positions = torch.randint(0, max_pos, (T,), generator=g, dtype=torch.int64)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    ang = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv_freq[None, :]
    cos_sin_cache = torch.cat([ang.cos(), ang.sin()], dim=-1)
    return q.to(device), k.to(device), positions.to(device), cos_sin_cache.to(device)


CASES = [
    {"T": 16384, "Hq": 32, "Hk": 8, "D": 128},
    {"T": 32768, "Hq": 32, "Hk": 32, "D": 128},
    {"T": 12000, "Hq": 40, "Hk": 8, "D": 128},
    {"T": 24576, "Hq": 28, "Hk": 4, "D": 128},
    {"T": 10000, "Hq": 64, "Hk": 8, "D": 128},
    {"T": 20000, "Hq": 16, "Hk": 16, "D": 64},
]
SMALL_CASES = [{"T": 24, "Hq": 6, "Hk": 2, "D": 64, "max_pos": 64},
               {"T": 9, "Hq": 5, "Hk": 3, "D": 32, "max_pos": 16}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, Hq, Hk, D = case["T"], case["Hq"], case["Hk"], case["D"]
    return 2 * 2 * T * (Hq + Hk) * D + 4 * T * D + 8 * T


def flops(case):
    T, Hq, Hk, D = case["T"], case["Hq"], case["Hk"], case["D"]
    return 3 * T * (Hq + Hk) * D
