"""Row-wise bias add on a padded 2-D buffer (row pitch a multiple of 16 elements). Planted: the row
stride and pointers are excluded from specialization, so nothing is known to be 16-byte aligned."""

import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["stride"], do_not_specialize_on_alignment=["x_ptr", "out_ptr"])
def bias_rows_kernel(x_ptr, b_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, x + b, mask=mask)


def entry(x, b):
    rows, cols = x.shape
    out = torch.empty_like(x)
    bias_rows_kernel[(rows, triton.cdiv(cols, 1024))](x, b, out, cols, x.stride(0), BLOCK=1024)
    return out


def reference(x, b):
    return x + b


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["rows"], case["cols"], generator=g).to(device)
    b = torch.randn(case["cols"], generator=g).to(device)
    return x, b


CASES = [{"rows": 8192, "cols": 4096}, {"rows": 4096, "cols": 8192}, {"rows": 16384, "cols": 2048},
         {"rows": 2048, "cols": 16384}, {"rows": 32768, "cols": 1024}]
SMALL_CASES = [{"rows": 7, "cols": 256}, {"rows": 3, "cols": 1024}]


def bytes_moved(case):
    return 4 * (2 * case["rows"] * case["cols"] + case["cols"])
