"""One explicit heat-equation step on a periodic 3-D fp32 grid with a 4th-order 13-point Laplacian. Planted: periodic wrap done with runtime % on every neighbour index of a flat launch."""
import torch
import triton
import triton.language as tl

COEF = 0.05  # kappa * dt / h^2


@triton.jit
def _heat3d_step_kernel(u_ptr, out_ptr, NX, NY, NZ, coef,
                        BLOCK_X: tl.constexpr):
    # one program per (x-line, x-chunk): y/z wraps are per-program scalars,
    # x wraps only touch the two cells at each end of the line
    line_id = tl.program_id(0)
    pid_x = tl.program_id(1)
    k = line_id // NY
    j = line_id - k * NY
    plane = NX * NY
    # neighbour lines: wrap with a compare instead of a modulo (NY, NZ >= 2)
    ym1 = tl.where(j >= 1, j - 1, j - 1 + NY)
    ym2 = tl.where(j >= 2, j - 2, j - 2 + NY)
    yp1 = tl.where(j + 1 < NY, j + 1, j + 1 - NY)
    yp2 = tl.where(j + 2 < NY, j + 2, j + 2 - NY)
    zm1 = tl.where(k >= 1, k - 1, k - 1 + NZ)
    zm2 = tl.where(k >= 2, k - 2, k - 2 + NZ)
    zp1 = tl.where(k + 1 < NZ, k + 1, k + 1 - NZ)
    zp2 = tl.where(k + 2 < NZ, k + 2, k + 2 - NZ)

    i = pid_x * BLOCK_X + tl.arange(0, BLOCK_X)
    mask = i < NX
    xm2 = tl.where(i >= 2, i - 2, i - 2 + NX)
    xm1 = tl.where(i >= 1, i - 1, i - 1 + NX)
    xp1 = tl.where(i + 1 < NX, i + 1, i + 1 - NX)
    xp2 = tl.where(i + 2 < NX, i + 2, i + 2 - NX)

    line = u_ptr + k * plane + j * NX
    c = tl.load(line + i, mask=mask, other=0.0)
    lx = (16.0 * (tl.load(line + xm1, mask=mask, other=0.0) + tl.load(line + xp1, mask=mask, other=0.0))
          - (tl.load(line + xm2, mask=mask, other=0.0) + tl.load(line + xp2, mask=mask, other=0.0)))
    col = u_ptr + k * plane + i
    ly = (16.0 * (tl.load(col + ym1 * NX, mask=mask, other=0.0) + tl.load(col + yp1 * NX, mask=mask, other=0.0))
          - (tl.load(col + ym2 * NX, mask=mask, other=0.0) + tl.load(col + yp2 * NX, mask=mask, other=0.0)))
    pil = u_ptr + j * NX + i
    lz = (16.0 * (tl.load(pil + zm1 * plane, mask=mask, other=0.0) + tl.load(pil + zp1 * plane, mask=mask, other=0.0))
          - (tl.load(pil + zm2 * plane, mask=mask, other=0.0) + tl.load(pil + zp2 * plane, mask=mask, other=0.0)))
    lap = (lx + ly + lz - 90.0 * c) * (1.0 / 12.0)
    tl.store(out_ptr + k * plane + j * NX + i, c + coef * lap, mask=mask)


def entry(u):
    NZ, NY, NX = u.shape
    out = torch.empty_like(u)
    # widest x-chunk that does not waste much of the last chunk of each line; 8 cells per thread
    BLOCK_X = min((1024, 512, 256), key=lambda b: (triton.cdiv(NX, b) * b > 1.1 * NX, triton.cdiv(NX, b) * b, -b))
    grid = (NZ * NY, triton.cdiv(NX, BLOCK_X))
    _heat3d_step_kernel[grid](u, out, NX, NY, NZ, COEF, BLOCK_X=BLOCK_X, num_warps=BLOCK_X // 256)
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
