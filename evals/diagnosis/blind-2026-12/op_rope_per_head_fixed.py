"""NeoX-style rotary position embedding applied to a [tokens, heads, head_dim] activation with per-token cos/sin tables. Planted: one program per (token, head), each touching a single head_dim vector."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rope_fwd_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n_rows, H,
                     stride_xt, stride_xh, stride_ot, stride_oh, stride_ct,
                     HALF: tl.constexpr, BLOCK_R: tl.constexpr):
    # each program rotates BLOCK_R consecutive (token, head) rows
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < n_rows
    tok = rows // H
    head = rows - tok * H
    d = tl.arange(0, HALF)
    m2 = rmask[:, None]

    x_row = x_ptr + (tok * stride_xt + head * stride_xh)[:, None] + d[None, :]
    x1 = tl.load(x_row, mask=m2, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + HALF, mask=m2, other=0.0).to(tl.float32)
    cs_off = (tok * stride_ct)[:, None] + d[None, :]
    c = tl.load(cos_ptr + cs_off, mask=m2, other=0.0)
    s = tl.load(sin_ptr + cs_off, mask=m2, other=0.0)

    o_row = out_ptr + (tok * stride_ot + head * stride_oh)[:, None] + d[None, :]
    tl.store(o_row, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=m2)
    tl.store(o_row + HALF, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=m2)


def entry(x, cos, sin):
    T, H, D = x.shape
    assert x.stride(-1) == 1 and cos.stride(-1) == 1 and cos.shape == (T, D // 2)
    out = torch.empty_like(x)
    half = D // 2
    n_rows = T * H
    BLOCK_R = max(1, 2048 // half)   # 2K rotated pairs (8 KB of x) per program
    grid = (triton.cdiv(n_rows, BLOCK_R),)
    _rope_fwd_kernel[grid](
        x, cos, sin, out, n_rows, H,
        x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
        HALF=half, BLOCK_R=BLOCK_R, num_warps=4,
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
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    x = torch.randn(T, H, D, generator=g).to(dtype)
    start = int(torch.randint(0, 4096, (1,), generator=g))
    pos = torch.arange(start, start + T, dtype=torch.float32)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D // 2, dtype=torch.float32) / (D // 2)))
    ang = pos[:, None] * inv_freq[None, :]
    return x.to(device), ang.cos().contiguous().to(device), ang.sin().contiguous().to(device)


CASES = [
    {"T": 16384, "H": 32, "D": 128, "dtype": "bfloat16"},
    {"T": 12289, "H": 40, "D": 128, "dtype": "bfloat16"},
    {"T": 65536, "H": 8, "D": 64, "dtype": "float16"},
    {"T": 24576, "H": 28, "D": 64, "dtype": "bfloat16"},
]
SMALL_CASES = [
    {"T": 7, "H": 3, "D": 32, "dtype": "bfloat16"},
    {"T": 33, "H": 4, "D": 64, "dtype": "float16"},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * T * H * D * 2 + 2 * T * (D // 2) * 4


def flops(case):
    return 6 * case["T"] * case["H"] * (case["D"] // 2)

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
