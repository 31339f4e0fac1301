"""CSR sparse matrix-vector product y = A @ x (fp32 values, int32 indices), one program per row. Planted: scalar loop over the row's nonzeros, one element per iteration."""
import torch
import triton
import triton.language as tl


@triton.jit
def _csr_spmv_kernel(crow_ptr, col_ptr, val_ptr, x_ptr, y_ptr):
    row = tl.program_id(0)
    start = tl.load(crow_ptr + row)
    end = tl.load(crow_ptr + row + 1)
    acc = 0.0
    for j in range(start, end):
        c = tl.load(col_ptr + j)
        acc += tl.load(val_ptr + j) * tl.load(x_ptr + c)
    tl.store(y_ptr + row, acc)


def entry(crow, col, val, x):
    n_rows = crow.shape[0] - 1
    y = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    _csr_spmv_kernel[(n_rows,)](crow, col, val, x, y, num_warps=1)
    return y


def reference(crow, col, val, x):
    n_rows = crow.shape[0] - 1
    counts = (crow[1:] - crow[:-1]).long()
    rows = torch.repeat_interleave(torch.arange(n_rows, device=x.device), counts)
    y = torch.zeros(n_rows, device=x.device, dtype=torch.float64)
    y.index_add_(0, rows, val.double() * x.double()[col.long()])
    return y.float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    R, C, lo, hi = case["rows"], case["cols"], case["nnz_lo"], case["nnz_hi"]
    counts = torch.randint(lo, hi + 1, (R,), generator=g, dtype=torch.int64)
    crow = torch.zeros(R + 1, dtype=torch.int64)
    crow[1:] = torch.cumsum(counts, 0)
    nnz = int(crow[-1])
    col = torch.randint(0, C, (nnz,), generator=g, dtype=torch.int32)
    val = torch.randn(nnz, generator=g)
    x = torch.randn(C, generator=g)
    return crow.to(torch.int32).to(device), col.to(device), val.to(device), x.to(device)


CASES = [
    {"rows": 1000000, "cols": 1000000, "nnz_lo": 16, "nnz_hi": 48},
    {"rows": 262144, "cols": 262144, "nnz_lo": 96, "nnz_hi": 160},
    {"rows": 2000003, "cols": 2000003, "nnz_lo": 4, "nnz_hi": 28},
    {"rows": 500000, "cols": 2000000, "nnz_lo": 40, "nnz_hi": 88},
]
SMALL_CASES = [
    {"rows": 37, "cols": 50, "nnz_lo": 0, "nnz_hi": 9},
    {"rows": 64, "cols": 300, "nnz_lo": 20, "nnz_hi": 90},
]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    nnz = case["rows"] * (case["nnz_lo"] + case["nnz_hi"]) // 2
    return nnz * 8 + 4 * (case["rows"] + 1) + 4 * case["cols"] + 4 * case["rows"]


def flops(case):
    return case["rows"] * (case["nnz_lo"] + case["nnz_hi"])

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
