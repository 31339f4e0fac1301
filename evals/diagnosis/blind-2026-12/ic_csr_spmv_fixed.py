"""CSR sparse matrix-vector product y = A @ x (fp32 values, int32 indices), one program per row. Planted: scalar loop over the row's nonzeros, one element per iteration."""
import torch
import triton
import triton.language as tl


@triton.jit
def _csr_spmv_kernel(crow_ptr, col_ptr, val_ptr, x_ptr, y_ptr, n_rows,
                     ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # ROWS rows per program, BLOCK nonzeros of each row per iteration: all loads of a
    # [ROWS, BLOCK] tile are independent, and the row sums are one reduction at the end
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    start = tl.load(crow_ptr + rows, mask=rmask, other=0)
    length = tl.load(crow_ptr + rows + 1, mask=rmask, other=0) - start
    max_len = tl.max(length, axis=0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((ROWS, BLOCK), dtype=tl.float32)
    for j in range(0, max_len, BLOCK):
        k = j + offs
        m = k[None, :] < length[:, None]
        idx = start[:, None] + k[None, :]
        c = tl.load(col_ptr + idx, mask=m, other=0)
        v = tl.load(val_ptr + idx, mask=m, other=0.0)
        acc += v * tl.load(x_ptr + c, mask=m, other=0.0)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=rmask)


def entry(crow, col, val, x):
    n_rows = crow.shape[0] - 1
    y = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    avg_nnz = col.shape[0] / max(n_rows, 1)
    BLOCK = 32 if avg_nnz <= 48 else 64
    ROWS = 1024 // BLOCK
    grid = (triton.cdiv(n_rows, ROWS),)
    _csr_spmv_kernel[grid](crow, col, val, x, y, n_rows, ROWS=ROWS, BLOCK=BLOCK, num_warps=4)
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
