"""Softmax over the class/channel axis of NCHW fp32 segmentation logits [B, C, H, W] (dim=1). Planted: the channel axis is made contiguous by materialising NCHW->NHWC and back with two transpose kernels around a row softmax, i.e. three kernels and three round trips to HBM where one strided-axis reduction kernel would do."""
import torch
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(
    in_ptr, out_ptr, R, S,
    stride_ib, stride_ir, stride_ob, stride_os,
    BLOCK_R: tl.constexpr, BLOCK_S: tl.constexpr,
):
    # [B, R, S] (S contiguous) -> [B, S, R] (R contiguous), one 2-D tile per program
    pid_s = tl.program_id(0)
    pid_r = tl.program_id(1)
    b = tl.program_id(2)
    r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = (r < R)[:, None] & (s < S)[None, :]
    tile = tl.load(in_ptr + b * stride_ib + r[:, None] * stride_ir + s[None, :], mask=mask)
    tl.store(out_ptr + b * stride_ob + s[None, :] * stride_os + r[:, None], tile, mask=mask)


@triton.jit
def _softmax_rows_kernel(
    x_ptr, y_ptr, n_rows, n_cols,
    BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = tl.arange(0, BLOCK_C)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + offs, y, mask=mask)


def entry(x):
    B, C, H, W = x.shape
    HW = H * W
    BLOCK_T = 64
    # NCHW -> NHWC so that each pixel's C logits are one contiguous row
    x_nhwc = torch.empty((B, HW, C), device=x.device, dtype=x.dtype)
    _transpose_kernel[(triton.cdiv(HW, BLOCK_T), triton.cdiv(C, BLOCK_T), B)](
        x, x_nhwc, C, HW, C * HW, HW, HW * C, C,
        BLOCK_R=BLOCK_T, BLOCK_S=BLOCK_T, num_warps=4,
    )
    y_nhwc = torch.empty_like(x_nhwc)
    BLOCK_C = triton.next_power_of_2(C)
    BLOCK_ROWS = max(1, 4096 // BLOCK_C)
    n_rows = B * HW
    _softmax_rows_kernel[(triton.cdiv(n_rows, BLOCK_ROWS),)](
        x_nhwc, y_nhwc, n_rows, C,
        BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C, num_warps=4,
    )
    # back to NCHW
    out = torch.empty_like(x)
    _transpose_kernel[(triton.cdiv(C, BLOCK_T), triton.cdiv(HW, BLOCK_T), B)](
        y_nhwc, out, HW, C, HW * C, C, C * HW, HW,
        BLOCK_R=BLOCK_T, BLOCK_S=BLOCK_T, num_warps=4,
    )
    return out


def reference(x):
    return torch.softmax(x, dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, C, H, W = case["B"], case["C"], case["H"], case["W"]
    x = torch.randn(B, C, H, W, generator=g) * 3.0
    return (x.to(device),)


CASES = [
    {"B": 8, "C": 19, "H": 512, "W": 1024},
    {"B": 4, "C": 150, "H": 256, "W": 256},
    {"B": 16, "C": 21, "H": 321, "W": 321},
    {"B": 2, "C": 171, "H": 512, "W": 512},
]

SMALL_CASES = [
    {"B": 2, "C": 5, "H": 7, "W": 9},
    {"B": 1, "C": 21, "H": 10, "W": 13},
]

TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return case["B"] * case["C"] * case["H"] * case["W"] * 4 * 2


def flops(case):
    return case["B"] * case["C"] * case["H"] * case["W"] * 5

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
