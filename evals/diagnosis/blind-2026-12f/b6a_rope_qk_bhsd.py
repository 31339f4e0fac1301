import torch, triton, triton.language as tl


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H, S,
                 stride_xb, stride_xh, stride_xs,
                 stride_ob, stride_oh, stride_os,
                 HALF: tl.constexpr, BLOCK_S: tl.constexpr):
    # rotate-half rotary embedding on one (batch, head) and BLOCK_S positions
    pid_bh = tl.program_id(0)
    b = pid_bh // H
    h = pid_bh % H
    offs_s = tl.program_id(1) * BLOCK_S + tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, HALF)
    mask = (offs_s < S)[:, None]
    x_ptrs = x_ptr + b * stride_xb + h * stride_xh + offs_s[:, None] * stride_xs + offs_d[None, :]
    x1 = tl.load(x_ptrs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptrs + HALF, mask=mask, other=0.0).to(tl.float32)
    cs_off = offs_s[:, None] * HALF + offs_d[None, :]
    cos = tl.load(cos_ptr + cs_off, mask=mask, other=0.0).to(tl.float32)
    sin = tl.load(sin_ptr + cs_off, mask=mask, other=0.0).to(tl.float32)
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    o_ptrs = out_ptr + b * stride_ob + h * stride_oh + offs_s[:, None] * stride_os + offs_d[None, :]
    tl.store(o_ptrs, o1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_ptrs + HALF, o2.to(out_ptr.dtype.element_ty), mask=mask)


def _apply_rope(x, cos, sin):
    # x: [B, H, S, D] -> rotated copy [B, H, S, D]
    B, H, S, D = x.shape
    out = torch.empty((B, H, S, D), device=x.device, dtype=x.dtype)
    BLOCK_S = 32
    grid = (B * H, triton.cdiv(S, BLOCK_S))
    _rope_kernel[grid](x, cos, sin, out, H, S,
                       x.stride(0), x.stride(1), x.stride(2),
                       out.stride(0), out.stride(1), out.stride(2),
                       HALF=D // 2, BLOCK_S=BLOCK_S, num_warps=4)
    return out


def entry(q, k, cos, sin):
    # q: [B, S, Hq, D], k: [B, S, Hkv, D] straight from the QKV projection;
    # cos, sin: [S, D/2]. Returns rotated q, k in [B, H, S, D] layout for attention.
    q = q.transpose(1, 2).contiguous()
    k = k.transpose(1, 2).contiguous()
    return _apply_rope(q, cos, sin), _apply_rope(k, cos, sin)


def reference(q, k, cos, sin):
    def rot(x):
        x = x.float().transpose(1, 2)
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        c = cos.float()[None, None]
        s = sin.float()[None, None]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    return rot(q).to(q.dtype), rot(k).to(k.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, S, Hq, Hkv, D = case["B"], case["S"], case["Hq"], case["Hkv"], case["D"]
    q = torch.randn(B, S, Hq, D, generator=g).to(torch.bfloat16)
    k = torch.randn(B, S, Hkv, D, generator=g).to(torch.bfloat16)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D // 2, dtype=torch.float32) / (D // 2)))
    pos = torch.arange(S, dtype=torch.float32) + torch.rand(1, generator=g)
    ang = pos[:, None] * inv_freq[None, :]
    cos = ang.cos().to(torch.bfloat16)
    sin = ang.sin().to(torch.bfloat16)
    return q.to(device), k.to(device), cos.to(device), sin.to(device)


CASES = [
    {"B": 4, "S": 4096, "Hq": 32, "Hkv": 8, "D": 128},
    {"B": 1, "S": 16384, "Hq": 28, "Hkv": 4, "D": 128},
    {"B": 8, "S": 2000, "Hq": 40, "Hkv": 8, "D": 128},
    {"B": 6, "S": 3000, "Hq": 16, "Hkv": 16, "D": 64},
    {"B": 2, "S": 6144, "Hq": 64, "Hkv": 8, "D": 128},
]
SMALL_CASES = [{"B": 2, "S": 40, "Hq": 4, "Hkv": 2, "D": 64}, {"B": 1, "S": 33, "Hq": 3, "Hkv": 1, "D": 32}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, S, Hq, Hkv, D = case["B"], case["S"], case["Hq"], case["Hkv"], case["D"]
    return 2 * B * S * (Hq + Hkv) * D * 2 + 2 * S * D * 2


def flops(case):
    B, S, Hq, Hkv, D = case["B"], case["S"], case["Hq"], case["Hkv"], case["D"]
    return 3 * B * S * (Hq + Hkv) * D
