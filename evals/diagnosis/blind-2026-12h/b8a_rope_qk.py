import torch, triton, triton.language as tl


@triton.jit
def _rope_neox_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr,
                      stride_qt, stride_qh, stride_kt, stride_kh, stride_ct, HQ,
                      HALF: tl.constexpr):
    # rotate-half rotary embedding on q and k
    t = tl.program_id(0)
    h = tl.program_id(1)
    offs = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + t * stride_ct + offs)
    sin = tl.load(sin_ptr + t * stride_ct + offs)
    if h < HQ:
        src = q_ptr + t.to(tl.int64) * stride_qt + h * stride_qh
        dst = qo_ptr + t.to(tl.int64) * stride_qt + h * stride_qh
    else:
        src = k_ptr + t.to(tl.int64) * stride_kt + (h - HQ) * stride_kh
        dst = ko_ptr + t.to(tl.int64) * stride_kt + (h - HQ) * stride_kh
    x1 = tl.load(src + offs).to(tl.float32)
    x2 = tl.load(src + HALF + offs).to(tl.float32)
    y1 = x1 * cos - x2 * sin
    y2 = x2 * cos + x1 * sin
    tl.store(dst + offs, y1.to(dst.dtype.element_ty))
    tl.store(dst + HALF + offs, y2.to(dst.dtype.element_ty))


def entry(q, k, cos, sin):
    # q: [T, HQ, D], k: [T, HKV, D] (bf16); cos, sin: [T, D // 2] fp32 for each token's position
    T, HQ, D = q.shape
    HKV = k.shape[1]
    q = q.contiguous()
    k = k.contiguous()
    qo = torch.empty_like(q)
    ko = torch.empty_like(k)
    _rope_neox_kernel[(T, HQ + HKV)](
        q, k, cos, sin, qo, ko,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), cos.stride(0), HQ,
        HALF=D // 2)
    return qo, ko


def reference(q, k, cos, sin):
    def rot(x):
        half = x.shape[-1] // 2
        x1, x2 = x.float()[..., :half], x.float()[..., half:]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)
    return rot(q), rot(k)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, HQ, HKV, D = case["T"], case["HQ"], case["HKV"], case["D"]
    q = torch.randn((T, HQ, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    k = torch.randn((T, HKV, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    pos = torch.randint(0, 32768, (T,), generator=g).float()
    inv_freq = 1.0 / (500000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    ang = pos[:, None] * inv_freq[None, :]
    return (q.to(device), k.to(device), torch.cos(ang).to(device), torch.sin(ang).to(device))


CASES = [
    {"T": 16384, "HQ": 32, "HKV": 8, "D": 128},
    {"T": 8192, "HQ": 64, "HKV": 8, "D": 128},
    {"T": 12000, "HQ": 28, "HKV": 4, "D": 128},
    {"T": 20000, "HQ": 40, "HKV": 8, "D": 128},
    {"T": 32768, "HQ": 16, "HKV": 16, "D": 64},
    {"T": 6000, "HQ": 48, "HKV": 8, "D": 128},
]
SMALL_CASES = [{"T": 9, "HQ": 4, "HKV": 2, "D": 32}, {"T": 5, "HQ": 3, "HKV": 1, "D": 64}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["HQ"] + case["HKV"], case["D"]
    return 2 * 2 * T * H * D + 2 * 4 * T * (D // 2)


def flops(case):
    return 3 * case["T"] * (case["HQ"] + case["HKV"]) * case["D"]
