import torch, triton, triton.language as tl


@triton.jit
def rope_kernel(x_ptr, pos_ptr, cs_ptr, out_ptr, H, stride_t, stride_h,
                HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    # rotate-half (NeoX) rotary embedding for all heads of one token
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    offs = tl.arange(0, HALF)
    offs_h = tl.arange(0, BLOCK_H)
    cos = tl.load(cs_ptr + pos * 2 * HALF + offs)[None, :]
    sin = tl.load(cs_ptr + pos * 2 * HALF + HALF + offs)[None, :]
    mask = (offs_h < H)[:, None]
    base = t * stride_t + offs_h[:, None] * stride_h + offs[None, :]
    x1 = tl.load(x_ptr + base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF, mask=mask, other=0.0).to(tl.float32)
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    tl.store(out_ptr + base, o1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + base + HALF, o2.to(out_ptr.dtype.element_ty), mask=mask)


def entry(x, positions, cos_sin_cache):
    # x: [T, H, D] packed tokens, positions: [T], cos_sin_cache: [max_pos, D] = [cos | sin]
    T, H, D = x.shape
    out = torch.empty_like(x)
    rope_kernel[(T,)](x, positions, cos_sin_cache, out, H, x.stride(0), x.stride(1),
                      HALF=D // 2, BLOCK_H=triton.next_power_of_2(H), num_warps=4)
    return out


def reference(x, positions, cos_sin_cache):
    D = x.shape[-1]
    cs = cos_sin_cache[positions]
    cos = cs[:, None, : D // 2]
    sin = cs[:, None, D // 2:]
    xf = x.float()
    x1, x2 = xf[..., : D // 2], xf[..., D // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def _cos_sin_cache(max_pos, D, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    freqs = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    max_pos = 8192
    x = torch.randn(T, H, D, generator=g).to(torch.bfloat16)
    positions = torch.randint(0, max_pos, (T,), generator=g, dtype=torch.int64)
    cache = _cos_sin_cache(max_pos, D)
    return x.to(device), positions.to(device), cache.to(device)


CASES = [
    {"T": 16384, "H": 32, "D": 128},
    {"T": 8192, "H": 40, "D": 128},
    {"T": 12000, "H": 28, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 20000, "H": 16, "D": 64},
    {"T": 4096, "H": 64, "D": 128},
]
SMALL_CASES = [{"T": 7, "H": 3, "D": 64}, {"T": 5, "H": 4, "D": 128}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * 2 * T * H * D + 8 * T + 4 * T * D


def flops(case):
    return 6 * case["T"] * case["H"] * case["D"] // 2
