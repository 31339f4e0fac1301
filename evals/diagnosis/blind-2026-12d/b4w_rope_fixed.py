import torch, triton, triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H,
                stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    # rotate-half rotary embedding for all heads of one token
    t = tl.program_id(0)
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    mask = (h < H)[:, None]
    x_row = x_ptr + t * stride_xt + h[:, None] * stride_xh + d[None, :]
    o_row = out_ptr + t * stride_ot + h[:, None] * stride_oh + d[None, :]
    x1 = tl.load(x_row, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + HALF, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + t * stride_ct + d)[None, :]
    s = tl.load(sin_ptr + t * stride_ct + d)[None, :]
    tl.store(o_row, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_row + HALF, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


def entry(x, cos, sin):
    T, H, D = x.shape
    out = torch.empty_like(x)
    rope_kernel[(T,)](x, cos, sin, out, H,
                      x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
                      HALF=D // 2, BLOCK_H=triton.next_power_of_2(H))
    return out


def reference(x, cos, sin):
    D = x.shape[-1]
    xf = x.float()
    x1, x2 = xf[..., : D // 2], xf[..., D // 2:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    x = torch.randn(T, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    pos = torch.randint(0, 8192, (T,), generator=g).float()
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D // 2, dtype=torch.float32) * 2.0 / D))
    ang = pos[:, None] * inv_freq[None, :]
    return (x.to(device), torch.cos(ang).contiguous().to(device), torch.sin(ang).contiguous().to(device))


CASES = [
    {"T": 16384, "H": 32, "D": 128},
    {"T": 8192, "H": 40, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 24000, "H": 32, "D": 64},
    {"T": 4096, "H": 64, "D": 128},
    {"T": 20000, "H": 28, "D": 128},
]
SMALL_CASES = [{"T": 7, "H": 3, "D": 64}, {"T": 5, "H": 8, "D": 32}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * T * H * D * 2 + 2 * T * (D // 2) * 4


def flops(case):
    return 3 * case["T"] * case["H"] * case["D"]
