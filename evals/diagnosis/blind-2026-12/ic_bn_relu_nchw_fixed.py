"""Inference BatchNorm2d + ReLU on an NCHW bf16 activation (running stats folded on the fly). Planted: per-element channel index via runtime // and % in a flat 1-D launch."""
import torch
import triton
import triton.language as tl


@triton.jit
def _bn_relu_nchw_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, var_ptr,
                         NC, C, HW, eps,
                         ROWS: tl.constexpr, BLOCK_HW: tl.constexpr):
    # 2-D launch over (N*C planes, HW): the channel is a per-row scalar, no per-element div/mod
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    rows = pid_r * ROWS + tl.arange(0, ROWS)
    row_mask = rows < NC
    ch = rows % C
    w = tl.load(w_ptr + ch, mask=row_mask, other=1.0)
    b = tl.load(b_ptr + ch, mask=row_mask, other=0.0)
    mu = tl.load(mean_ptr + ch, mask=row_mask, other=0.0)
    var = tl.load(var_ptr + ch, mask=row_mask, other=1.0)
    scale = w * tl.rsqrt(var + eps)
    shift = b - mu * scale
    cols = pid_c * BLOCK_HW + tl.arange(0, BLOCK_HW)
    mask = row_mask[:, None] & (cols < HW)[None, :]
    offs = rows[:, None] * HW + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * scale[:, None] + shift[:, None]
    y = tl.maximum(y, 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias, running_mean, running_var):
    N, C, H, W = x.shape
    y = torch.empty_like(x)
    HW = H * W
    NC = N * C
    # widest HW tile that does not waste much of the last chunk of each plane
    BLOCK_HW = min((1024, 512, 256), key=lambda b: (triton.cdiv(HW, b) * b > 1.15 * HW, triton.cdiv(HW, b) * b, -b))
    ROWS = 4096 // BLOCK_HW
    grid = (triton.cdiv(NC, ROWS), triton.cdiv(HW, BLOCK_HW))
    _bn_relu_nchw_kernel[grid](x, y, weight, bias, running_mean, running_var,
                               NC, C, HW, 1e-5, ROWS=ROWS, BLOCK_HW=BLOCK_HW, num_warps=4)
    return y


def reference(x, weight, bias, running_mean, running_var):
    y = torch.nn.functional.batch_norm(x.float(), running_mean, running_var, weight, bias,
                                       training=False, eps=1e-5)
    return torch.relu(y).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W = case["N"], case["C"], case["H"], case["W"]
    x = torch.randn(N, C, H, W, generator=g).to(torch.bfloat16)
    weight = torch.rand(C, generator=g) * 1.5 + 0.25
    bias = torch.randn(C, generator=g) * 0.2
    running_mean = torch.randn(C, generator=g) * 0.5
    running_var = torch.rand(C, generator=g) * 2.0 + 0.1
    return tuple(t.to(device) for t in (x, weight, bias, running_mean, running_var))


CASES = [
    {"N": 256, "C": 1024, "H": 14, "W": 14},
    {"N": 64, "C": 192, "H": 71, "W": 71},
    {"N": 96, "C": 288, "H": 35, "W": 35},
    {"N": 192, "C": 240, "H": 30, "W": 30},
]
SMALL_CASES = [
    {"N": 2, "C": 3, "H": 5, "W": 7},
    {"N": 3, "C": 16, "H": 9, "W": 9},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    n = case["N"] * case["C"] * case["H"] * case["W"]
    return 2 * n * 2 + 4 * case["C"] * 4


def flops(case):
    return 4 * case["N"] * case["C"] * case["H"] * case["W"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
