import torch, triton, triton.language as tl

# Rotary position embedding (half-split / NeoX style) applied to the query and
# key projections of an attention layer. q: [B, S, Hq, D], k: [B, S, Hk, D],
# cos/sin: [S, D/2] float32 tables. Outputs keep the [B, S, H, D] layout.


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, S, H,
                 stride_xb, stride_xs, stride_xh,
                 stride_ob, stride_os, stride_oh,
                 D_HALF: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_bh = tl.program_id(0)
    pid_s = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    d = tl.arange(0, D_HALF)
    mask = s[:, None] < S
    x_off = b.to(tl.int64) * stride_xb + h * stride_xh + s[:, None] * stride_xs + d[None, :]
    o_off = b.to(tl.int64) * stride_ob + h * stride_oh + s[:, None] * stride_os + d[None, :]
    x1 = tl.load(x_ptr + x_off, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + x_off + D_HALF, mask=mask, other=0.0).to(tl.float32)
    cs_off = s[:, None] * D_HALF + d[None, :]
    c = tl.load(cos_ptr + cs_off, mask=mask, other=0.0)
    sn = tl.load(sin_ptr + cs_off, mask=mask, other=0.0)
    o1 = x1 * c - x2 * sn
    o2 = x2 * c + x1 * sn
    tl.store(out_ptr + o_off, o1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + o_off + D_HALF, o2.to(out_ptr.dtype.element_ty), mask=mask)


def _apply(x, cos, sin):
    B, S, H, D = x.shape
    out = torch.empty_like(x)
    BLOCK_S = 64
    grid = (B * H, triton.cdiv(S, BLOCK_S))
    _rope_kernel[grid](x, cos, sin, out, S, H,
                       x.stride(0), x.stride(1), x.stride(2),
                       out.stride(0), out.stride(1), out.stride(2),
                       D_HALF=D // 2, BLOCK_S=BLOCK_S, num_warps=4)
    return out


def entry(q, k, cos, sin):
    return _apply(q, cos, sin), _apply(k, cos, sin)


def reference(q, k, cos, sin):
    def rot(x):
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h].float(), x[..., h:].float()
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)
    return rot(q), rot(k)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, S, Hq, Hk, D = case["B"], case["S"], case["Hq"], case["Hk"], case["D"]
    q = torch.randn(B, S, Hq, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    k = torch.randn(B, S, Hk, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    start = int(torch.randint(0, 1024, (1,), generator=g))
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    pos = torch.arange(start, start + S, dtype=torch.float32)
    ang = torch.outer(pos, inv_freq)
    return (q.to(device), k.to(device), ang.cos().contiguous().to(device), ang.sin().contiguous().to(device))


CASES = [
    {"B": 4, "S": 4096, "Hq": 32, "Hk": 8, "D": 128},
    {"B": 2, "S": 8192, "Hq": 32, "Hk": 8, "D": 128},
    {"B": 1, "S": 12000, "Hq": 40, "Hk": 8, "D": 128},
    {"B": 3, "S": 3000, "Hq": 28, "Hk": 4, "D": 128},
    {"B": 16, "S": 1024, "Hq": 32, "Hk": 32, "D": 64},
    {"B": 6, "S": 2500, "Hq": 24, "Hk": 24, "D": 64},
]
SMALL_CASES = [{"B": 2, "S": 37, "Hq": 4, "Hk": 2, "D": 32}, {"B": 1, "S": 70, "Hq": 3, "Hk": 1, "D": 16}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, S, Hq, Hk, D = case["B"], case["S"], case["Hq"], case["Hk"], case["D"]
    return 2 * 2 * B * S * (Hq + Hk) * D + 2 * 4 * S * (D // 2)


def flops(case):
    B, S, Hq, Hk, D = case["B"], case["S"], case["Hq"], case["Hk"], case["D"]
    return 3 * B * S * (Hq + Hk) * D
