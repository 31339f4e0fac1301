import torch, triton, triton.language as tl

# Backward of RMSNorm y = x * rstd * w, with rstd saved by the forward pass.
# Returns dx (input dtype) and dw (float32).


@triton.jit
def _rmsnorm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, M, D, stride,
                        rows_per_prog, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    row_start = pid * rows_per_prog
    row_end = tl.minimum(row_start + rows_per_prog, M)
    for i in range(0, row_end - row_start):
        row = row_start + i
        off = row.to(tl.int64) * stride + cols
        dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        xhat = x * rstd
        wdy = w * dy
        c = tl.sum(xhat * wdy, axis=0) / D
        dx = (wdy - xhat * c) * rstd
        tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw_acc += dy * xhat
    tl.store(dw_part_ptr + pid * D + cols, dw_acc, mask=mask)


def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


def entry(dy, x, w, rstd):
    M, D = x.shape
    dx = torch.empty_like(x)
    n_prog = min(M, 4 * _num_sms(x.device))
    rows_per_prog = triton.cdiv(M, n_prog)
    n_prog = triton.cdiv(M, rows_per_prog)
    dw_part = torch.empty(n_prog, D, device=x.device, dtype=torch.float32)
    BLOCK_D = triton.next_power_of_2(D)
    _rmsnorm_bwd_kernel[(n_prog,)](dy, x, w, rstd, dx, dw_part, M, D, x.stride(0), rows_per_prog,
                                   BLOCK_D=BLOCK_D, num_warps=8)
    return dx, dw_part.sum(dim=0)


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
