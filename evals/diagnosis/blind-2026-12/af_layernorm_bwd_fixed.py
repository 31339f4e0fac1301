"""LayerNorm backward (dx, dgamma, dbeta) for bf16 activations with fp32 weight. Planted: every row program atomically adds its dgamma/dbeta contribution into the same N floats."""
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_bwd_kernel(
    DY, X, W, Mean, Rstd, DX, PDW, PDB,
    stride_row, M, N,
    BLOCK_N: tl.constexpr,
):
    # persistent programs: each walks rows pid, pid + P, ... and keeps its
    # dgamma/dbeta partial sums in registers; one partial row per program.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0)
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(pid, M, nprog):
        x = tl.load(X + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)

        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(DX + row * stride_row + cols, dx.to(DX.dtype.element_ty), mask=mask)

        dw_acc += dy * xhat
        db_acc += dy
    tl.store(PDW + pid * N + cols, dw_acc, mask=mask)
    tl.store(PDB + pid * N + cols, db_acc, mask=mask)


@triton.jit
def _sum_partials_kernel(PDW, PDB, DW, DB, P, N, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    acc_w = tl.zeros([BLOCK_P, BLOCK_C], dtype=tl.float32)
    acc_b = tl.zeros([BLOCK_P, BLOCK_C], dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        m = (rows[:, None] < P) & cmask[None, :]
        offs = rows[:, None] * N + cols[None, :]
        acc_w += tl.load(PDW + offs, mask=m, other=0.0)
        acc_b += tl.load(PDB + offs, mask=m, other=0.0)
    tl.store(DW + cols, tl.sum(acc_w, axis=0), mask=cmask)
    tl.store(DB + cols, tl.sum(acc_b, axis=0), mask=cmask)


def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def entry(dy, x, weight, mean, rstd):
    M, N = x.shape
    assert x.is_contiguous() and dy.is_contiguous()
    dx = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(N)
    num_warps = min(max(BLOCK_N // 512, 4), 16)
    P = min(M, _num_sms(x.device) * max(16 // num_warps, 1))
    pdw = torch.empty((P, N), device=x.device, dtype=torch.float32)
    pdb = torch.empty((P, N), device=x.device, dtype=torch.float32)
    _layer_norm_bwd_kernel[(P,)](
        dy, x, weight, mean, rstd, dx, pdw, pdb,
        x.stride(0), M, N,
        BLOCK_N=BLOCK_N, num_warps=num_warps,
    )
    dw = torch.empty(N, device=x.device, dtype=torch.float32)
    db = torch.empty(N, device=x.device, dtype=torch.float32)
    BLOCK_C = 64
    _sum_partials_kernel[(triton.cdiv(N, BLOCK_C),)](
        pdw, pdb, dw, db, P, N, BLOCK_P=32, BLOCK_C=BLOCK_C, num_warps=4,
    )
    return dx, dw, db


def reference(dy, x, weight, mean, rstd):
    xf = x.float()
    dyf = dy.float()
    xhat = (xf - mean[:, None]) * rstd[:, None]
    wdy = weight[None, :] * dyf
    c1 = (xhat * wdy).mean(dim=1, keepdim=True)
    c2 = wdy.mean(dim=1, keepdim=True)
    dx = ((wdy - (xhat * c1 + c2)) * rstd[:, None]).to(x.dtype)
    dw = (dyf * xhat).sum(dim=0)
    db = dyf.sum(dim=0)
    return dx, dw, db


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = (torch.randn(M, N, generator=g) * 1.5 + 0.3).to(torch.bfloat16)
    dy = (torch.randn(M, N, generator=g) * 0.5).to(torch.bfloat16)
    weight = 1.0 + 0.1 * torch.randn(N, generator=g)
    xf = x.float()
    mean = xf.mean(dim=1)
    rstd = torch.rsqrt(xf.var(dim=1, unbiased=False) + 1e-5)
    return (dy.to(device), x.to(device), weight.to(device), mean.to(device), rstd.to(device))


CASES = [
    {"M": 32768, "N": 4096},
    {"M": 65536, "N": 1024},
    {"M": 24000, "N": 3072},
    {"M": 50021, "N": 2560},
]

SMALL_CASES = [
    {"M": 37, "N": 96},
    {"M": 64, "N": 200},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float32": (2e-2, 1e-3)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 3 * M * N * 2 + N * 4 * 3 + M * 8


def flops(case):
    return 12 * case["M"] * case["N"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
