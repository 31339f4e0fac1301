"""One explicit heat-equation step on a periodic 3-D fp32 grid with a 4th-order 13-point Laplacian. Planted: periodic wrap done with runtime % on every neighbour index of a flat launch."""
import torch
import triton
import triton.language as tl

COEF = 0.05  # kappa * dt / h^2


@triton.jit
def _heat3d_step_kernel(u_ptr, out_ptr, n_elements, NX, NY, NZ, coef,
                        BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    # flat index -> (k, j, i), x fastest
    i = offs % NX
    t = offs // NX
    j = t % NY
    k = t // NY
    plane = NX * NY
    # periodic neighbours
    xm2 = (i + NX - 2) % NX
    xm1 = (i + NX - 1) % NX
    xp1 = (i + 1) % NX
    xp2 = (i + 2) % NX
    ym2 = (j + NY - 2) % NY
    ym1 = (j + NY - 1) % NY
    yp1 = (j + 1) % NY
    yp2 = (j + 2) % NY
    zm2 = (k + NZ - 2) % NZ
    zm1 = (k + NZ - 1) % NZ
    zp1 = (k + 1) % NZ
    zp2 = (k + 2) % NZ
    line = k * plane + j * NX          # start of this x-line
    col = k * plane + i                # (k, *, i)
    pil = j * NX + i                   # (*, j, i)

    c = tl.load(u_ptr + offs, mask=mask, other=0.0)
    lx = (16.0 * (tl.load(u_ptr + line + xm1, mask=mask, other=0.0) + tl.load(u_ptr + line + xp1, mask=mask, other=0.0))
          - (tl.load(u_ptr + line + xm2, mask=mask, other=0.0) + tl.load(u_ptr + line + xp2, mask=mask, other=0.0)))
    ly = (16.0 * (tl.load(u_ptr + col + ym1 * NX, mask=mask, other=0.0) + tl.load(u_ptr + col + yp1 * NX, mask=mask, other=0.0))
          - (tl.load(u_ptr + col + ym2 * NX, mask=mask, other=0.0) + tl.load(u_ptr + col + yp2 * NX, mask=mask, other=0.0)))
    lz = (16.0 * (tl.load(u_ptr + zm1 * plane + pil, mask=mask, other=0.0) + tl.load(u_ptr + zp1 * plane + pil, mask=mask, other=0.0))
          - (tl.load(u_ptr + zm2 * plane + pil, mask=mask, other=0.0) + tl.load(u_ptr + zp2 * plane + pil, mask=mask, other=0.0)))
    lap = (lx + ly + lz - 90.0 * c) * (1.0 / 12.0)
    tl.store(out_ptr + offs, c + coef * lap, mask=mask)


def entry(u):
    NZ, NY, NX = u.shape
    out = torch.empty_like(u)
    n = u.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    _heat3d_step_kernel[grid](u, out, n, NX, NY, NZ, COEF, BLOCK=BLOCK, num_warps=4)
    return out


def reference(u):
    lap = -90.0 * u
    for d in range(3):
        lap = lap + 16.0 * (torch.roll(u, 1, d) + torch.roll(u, -1, d)) - (torch.roll(u, 2, d) + torch.roll(u, -2, d))
    return u + COEF * lap / 12.0


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(case["NZ"], case["NY"], case["NX"], generator=g)
    return (u.to(device),)


CASES = [
    {"NZ": 256, "NY": 256, "NX": 256},
    {"NZ": 96, "NY": 384, "NX": 640},
    {"NZ": 129, "NY": 257, "NX": 511},
    {"NZ": 64, "NY": 500, "NX": 1000},
]
SMALL_CASES = [
    {"NZ": 4, "NY": 5, "NX": 7},
    {"NZ": 6, "NY": 8, "NX": 16},
]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    return 2 * 4 * case["NZ"] * case["NY"] * case["NX"]


def flops(case):
    return 22 * case["NZ"] * case["NY"] * case["NX"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
