"""Rotary embedding (rotate-half) of bf16 q [B, S, H, D] producing head-major [B, H, S, D] output; planted: q is first copied to head-major layout by a permute kernel, then a second kernel applies RoPE to the copy."""
import torch
import triton
import triton.language as tl


@triton.jit
def permute_bshd_kernel(x_ptr, y_ptr, S, H, D: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    rs = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    rd = tl.arange(0, D)
    mask = rs[:, None] < S
    v = tl.load(x_ptr + b * S * H * D + rs[:, None] * (H * D) + h * D + rd[None, :], mask=mask)
    tl.store(y_ptr + (b * H + h) * S * D + rs[:, None] * D + rd[None, :], v, mask=mask)


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, S, H, D: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    HALF: tl.constexpr = D // 2
    rs = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    rd = tl.arange(0, HALF)
    mask = rs[:, None] < S
    base = bh * S * D + rs[:, None] * D + rd[None, :]
    x1 = tl.load(x_ptr + base, mask=mask).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF, mask=mask).to(tl.float32)
    c = tl.load(cos_ptr + rs[:, None] * HALF + rd[None, :], mask=mask)
    s = tl.load(sin_ptr + rs[:, None] * HALF + rd[None, :], mask=mask)
    tl.store(y_ptr + base, (x1 * c - x2 * s).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + base + HALF, (x2 * c + x1 * s).to(y_ptr.dtype.element_ty), mask=mask)


def entry(q, cos, sin):
    B, S, H, D = q.shape
    BLOCK_S = 32
    q_hm = torch.empty(B, H, S, D, device=q.device, dtype=q.dtype)
    permute_bshd_kernel[(triton.cdiv(S, BLOCK_S), H, B)](q, q_hm, S, H, D=D, BLOCK_S=BLOCK_S, num_warps=4)
    out = torch.empty(B, H, S, D, device=q.device, dtype=q.dtype)
    rope_kernel[(triton.cdiv(S, BLOCK_S), B * H)](q_hm, cos, sin, out, S, H, D=D, BLOCK_S=BLOCK_S, num_warps=4)
    return out


def reference(q, cos, sin):
    D = q.shape[-1]
    x = q.float().permute(0, 2, 1, 3)
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    c, s = cos[None, None], sin[None, None]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(q.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, S, H, D = case["B"], case["S"], case["H"], case["D"]
    q = torch.randn(B, S, H, D, generator=g).to(torch.bfloat16)
    inv = 1.0 / (10000 ** (torch.arange(0, D // 2, dtype=torch.float32) / (D // 2)))
    ang = torch.arange(S, dtype=torch.float32)[:, None] * inv[None, :] + 0.01 * torch.randn(S, D // 2, generator=g)
    return [q.to(device), torch.cos(ang).to(device), torch.sin(ang).to(device)]


CASES = [
    {"B": 4, "S": 4096, "H": 32, "D": 128},
    {"B": 1, "S": 32768, "H": 32, "D": 128},
    {"B": 8, "S": 2048, "H": 40, "D": 128},
    {"B": 16, "S": 1000, "H": 28, "D": 128},
    {"B": 2, "S": 8191, "H": 64, "D": 64},
    {"B": 4, "S": 4096, "H": 16, "D": 256},
]
SMALL_CASES = [{"B": 2, "S": 37, "H": 3, "D": 16}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    n = case["B"] * case["S"] * case["H"] * case["D"]
    return 2 * 2 * n + 2 * 4 * case["S"] * case["D"] // 2


def flops(case):
    return 3 * case["B"] * case["S"] * case["H"] * case["D"]
