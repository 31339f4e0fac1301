import torch, triton, triton.language as tl

# Rotary position embedding (GPT-NeoX / "rotate half" layout) on a [tokens, heads, head_dim]
# query tensor; cos/sin are the per-token tables already gathered for each token's position.


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n_heads,
                stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0)
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    hm = (h < n_heads)[:, None]
    xb = x_ptr + t * stride_xt + h[:, None] * stride_xh + d[None, :]
    ob = out_ptr + t * stride_ot + h[:, None] * stride_oh + d[None, :]
    c = tl.load(cos_ptr + t * stride_ct + d)[None, :]
    s = tl.load(sin_ptr + t * stride_ct + d)[None, :]
    x1 = tl.load(xb, mask=hm, other=0.0).to(tl.float32)
    x2 = tl.load(xb + HALF, mask=hm, other=0.0).to(tl.float32)
    tl.store(ob, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=hm)
    tl.store(ob + HALF, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=hm)


def entry(x, cos, sin):
    T, H, D = x.shape
    out = torch.empty_like(x)
    rope_kernel[(T,)](x, cos, sin, out, H,
                      x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
                      HALF=D // 2, BLOCK_H=triton.next_power_of_2(H), num_warps=4)
    return out


def reference(x, cos, sin):
    half = x.shape[-1] // 2
    xf = x.float()
    x1, x2 = xf[..., :half], xf[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    x = torch.randn(T, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    pos = torch.randint(0, 32768, (T,), generator=g).float()
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2).float() / D))
    ang = pos[:, None] * inv_freq[None, :] + 0.01 * torch.randn(T, D // 2, generator=g)
    return x.to(device), torch.cos(ang).contiguous().to(device), torch.sin(ang).contiguous().to(device)


CASES = [
    {"T": 16384, "H": 32, "D": 128},
    {"T": 8192, "H": 40, "D": 128},
    {"T": 12000, "H": 28, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 6000, "H": 64, "D": 128},
    {"T": 20000, "H": 16, "D": 64},
]
SMALL_CASES = [{"T": 5, "H": 3, "D": 64}, {"T": 9, "H": 4, "D": 32}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return T * H * D * 2 * 2 + T * D * 4


def flops(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 3 * T * H * D
