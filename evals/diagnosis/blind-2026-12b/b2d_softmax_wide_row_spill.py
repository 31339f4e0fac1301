"""bf16 row softmax over wide (vocab-sized) rows, one program per row; planted: whole 32K-column row held in registers by only 4 warps (256 fp32 values per thread), so the kernel spills to local memory."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + offs, mask=mask, other=float("-inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + row.to(tl.int64) * stride_y + offs, (num / den).to(y_ptr.dtype.element_ty), mask=mask)


def entry(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=4)
    return y


def reference(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = (3.0 * torch.randn(case["rows"], case["cols"], generator=g, dtype=torch.float32)).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"rows": 4096, "cols": 32000},
    {"rows": 2048, "cols": 32768},
    {"rows": 8192, "cols": 30522},
    {"rows": 3000, "cols": 25000},
    {"rows": 5000, "cols": 20001},
]
SMALL_CASES = [{"rows": 5, "cols": 1000}]
TOLERANCES = {"bfloat16": (1e-3, 2e-2)}


def bytes_moved(case):
    return 2 * 2 * case["rows"] * case["cols"]


def flops(case):
    return 5 * case["rows"] * case["cols"]
