# Optimized by kopt (run strided_scale-20261129-174708-0786) from strided_scale.py: x1.16 geomean speedup over 5 cases vs the original.
# 3 rounds tried; the improvements that got here:
#   round 3 (recipe:launch_config_search, diagnosis reached L3): L3 small_block at line 15, 17: scale_rows_kernel launch at line 26: 4 config(s) of BLOCK, num_warps (now BLOCK=256, num_warps=4) [num_warps=8 BLOCK=10 -> x1.16
# Details: kopt runs show strided_scale-20261129-174708-0786
"""Row-wise scale of a strided view: out[i, j] = x[i, j] * s[i], where x is a column slice of a wider
matrix (row stride != number of columns), the layout a kernel meets when it reads a view."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_kernel(x_ptr, s_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask)
    s = tl.load(s_ptr + row)
    tl.store(out_ptr + row * stride_out + cols, x * s, mask=mask)


def entry(x, s):
    rows, cols = x.shape
    assert x.stride(1) == 1
    out = torch.empty((rows, cols), device=x.device, dtype=x.dtype)
    block = 1024
    grid = (rows, triton.cdiv(cols, block))
    scale_rows_kernel[grid](x, s, out, cols, x.stride(0), out.stride(0), BLOCK=block, num_warps=8)
    return out


def reference(x, s):
    return x * s[:, None]


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    rows, cols, pad = case["rows"], case["cols"], case["pad"]
    wide = torch.randn(rows, cols + pad, device=device, generator=g)
    x = wide[:, pad:]  # a view: starts `pad` elements in, row stride cols + pad
    s = torch.randn(rows, device=device, generator=g)
    return x, s


CASES = [
    {"rows": 4096, "cols": 4096, "pad": 3},
    {"rows": 8192, "cols": 1000, "pad": 24},
    {"rows": 1023, "cols": 8191, "pad": 1},
    {"rows": 16384, "cols": 2048, "pad": 7},
    {"rows": 3, "cols": 1_000_001, "pad": 5},
]
HELD_OUT = [{"rows": 2047, "cols": 3001, "pad": 2}]
SMALL_CASES = [
    {"rows": 7, "cols": 300, "pad": 3},
    {"rows": 16, "cols": 256, "pad": 1},
    {"rows": 33, "cols": 1000, "pad": 24},
    {"rows": 1, "cols": 513, "pad": 5},
    {"rows": 64, "cols": 129, "pad": 7},
]


def bytes_moved(case):
    return 4 * (2 * case["rows"] * case["cols"] + case["rows"])


def flops(case):
    return case["rows"] * case["cols"]
