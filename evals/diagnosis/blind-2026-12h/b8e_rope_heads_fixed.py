import torch, triton, triton.language as tl


@triton.jit
def rope_neox_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, T,
                     stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                     HALF: tl.constexpr, BLOCK_T: tl.constexpr):
    # a block of tokens for one head: rotate the two halves of each head vector
    pid_t = tl.program_id(0)
    h = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, HALF)
    mask = (offs_t < T)[:, None]
    x_rows = x_ptr + offs_t[:, None] * stride_xt + h * stride_xh + offs_d[None, :]
    o_rows = out_ptr + offs_t[:, None] * stride_ot + h * stride_oh + offs_d[None, :]
    cs_off = offs_t[:, None] * stride_ct + offs_d[None, :]
    c = tl.load(cos_ptr + cs_off, mask=mask, other=0.0)
    s = tl.load(sin_ptr + cs_off, mask=mask, other=0.0)
    x1 = tl.load(x_rows, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_rows + HALF, mask=mask, other=0.0).to(tl.float32)
    o1 = x1 * c - x2 * s
    o2 = x2 * c + x1 * s
    tl.store(o_rows, o1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_rows + HALF, o2.to(out_ptr.dtype.element_ty), mask=mask)


def entry(x, cos, sin):
    T, H, D = x.shape
    half = D // 2
    assert half == triton.next_power_of_2(half)
    out = torch.empty_like(x)
    BLOCK_T = 16
    rope_neox_kernel[(triton.cdiv(T, BLOCK_T), H)](
        x, cos, sin, out, T,
        x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
        HALF=half, BLOCK_T=BLOCK_T,
    )
    return out


def reference(x, cos, sin):
    half = x.shape[-1] // 2
    xf = x.float()
    x1, x2 = xf[..., :half], xf[..., half:]
    c = cos[:, None, :]
    s = sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    x = torch.randn(T, H, D, generator=g).to(torch.bfloat16)
    ang = torch.randn(T, D // 2, generator=g) * 3.0
    cos, sin = torch.cos(ang), torch.sin(ang)
    return x.to(device), cos.contiguous().to(device), sin.contiguous().to(device)


CASES = [
    {"T": 8192, "H": 32, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 5000, "H": 40, "D": 128},
    {"T": 12000, "H": 28, "D": 128},
    {"T": 12288, "H": 64, "D": 64},
    {"T": 3000, "H": 96, "D": 128},
]
SMALL_CASES = [{"T": 16, "H": 4, "D": 32}, {"T": 7, "H": 3, "D": 16}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * T * H * D * 2 + 2 * T * (D // 2) * 4


def flops(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 3 * T * H * D
