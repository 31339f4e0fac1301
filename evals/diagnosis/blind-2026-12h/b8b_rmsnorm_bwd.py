import torch, triton, triton.language as tl

# Backward of RMSNorm y = x * rstd * w, with rstd saved by the forward pass.
# Returns dx (input dtype) and dw (float32).


@triton.jit
def _rmsnorm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, D, stride,
                        BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    off = row.to(tl.int64) * stride + cols
    dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + row)
    xhat = x * rstd
    wdy = w * dy
    c = tl.sum(xhat * wdy, axis=0) / D
    dx = (wdy - xhat * c) * rstd
    tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    tl.atomic_add(dw_ptr + cols, dy * xhat, mask=mask)


def entry(dy, x, w, rstd):
    M, D = x.shape
    dx = torch.empty_like(x)
    dw = torch.zeros(D, device=x.device, dtype=torch.float32)
    BLOCK_D = triton.next_power_of_2(D)
    _rmsnorm_bwd_kernel[(M,)](dy, x, w, rstd, dx, dw, D, x.stride(0),
                              BLOCK_D=BLOCK_D, num_warps=8)
    return dx, dw


def reference(dy, x, w, rstd):
    D = x.shape[1]
    xhat = x.float() * rstd[:, None]
    wdy = w.float()[None, :] * dy.float()
    c = (xhat * wdy).sum(dim=1, keepdim=True) / D
    dx = ((wdy - xhat * c) * rstd[:, None]).to(x.dtype)
    dw = (dy.float() * xhat).sum(dim=0)
    return dx, dw


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, D = case["M"], case["D"]
    x = torch.randn(M, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    dy = torch.randn(M, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    w = (1.0 + 0.1 * torch.randn(D, generator=g, dtype=torch.float32)).to(torch.bfloat16)
    rstd = torch.rsqrt(x.float().pow(2).mean(dim=1) + 1e-6)
    return (dy.to(device), x.to(device), w.to(device), rstd.to(device))


CASES = [
    {"M": 16384, "D": 4096},
    {"M": 8192, "D": 8192},
    {"M": 12000, "D": 5120},
    {"M": 32768, "D": 2048},
    {"M": 6000, "D": 7168},
    {"M": 20000, "D": 3072},
]
SMALL_CASES = [{"M": 50, "D": 96}, {"M": 33, "D": 200}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float32": (1e-3, 1e-3)}


def bytes_moved(case):
    M, D = case["M"], case["D"]
    return 3 * M * D * 2 + D * 2 + M * 4 + D * 4


def flops(case):
    return 8 * case["M"] * case["D"]
