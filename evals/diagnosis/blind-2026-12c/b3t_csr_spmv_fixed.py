import torch
import triton
import triton.language as tl


@triton.jit
def _csr_spmv_kernel(rowptr_ptr, col_ptr, val_ptr, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for j in range(start, end, BLOCK):
        idx = j + offs
        mask = idx < end
        c = tl.load(col_ptr + idx, mask=mask, other=0)
        v = tl.load(val_ptr + idx, mask=mask, other=0.0)
        acc += v * tl.load(x_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


def entry(rowptr, cols, vals, x):
    # y = A @ x for a CSR matrix A (rowptr: [M + 1], cols/vals: [nnz])
    M = rowptr.numel() - 1
    y = torch.empty((M,), dtype=torch.float32, device=x.device)
    _csr_spmv_kernel[(M,)](rowptr, cols, vals, x, y, BLOCK=64)
    return y


def reference(rowptr, cols, vals, x):
    M = rowptr.numel() - 1
    counts = (rowptr[1:] - rowptr[:-1]).long()
    row_ids = torch.repeat_interleave(torch.arange(M, device=x.device), counts)
    prod = vals * x[cols.long()]
    return torch.zeros((M,), dtype=torch.float32, device=x.device).index_add_(0, row_ids, prod)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    M, K, avg = case["M"], case["K"], case["avg"]
    counts = torch.randint(avg // 2, avg + avg // 2 + 1, (M,), generator=gen)
    rowptr = torch.zeros((M + 1,), dtype=torch.int64)
    rowptr[1:] = torch.cumsum(counts, 0)
    nnz = int(rowptr[-1])
    cols = torch.randint(0, K, (nnz,), generator=gen, dtype=torch.int32)
    vals = torch.randn((nnz,), generator=gen, dtype=torch.float32)
    x = torch.randn((K,), generator=gen, dtype=torch.float32)
    return rowptr.to(torch.int32).to(device), cols.to(device), vals.to(device), x.to(device)


CASES = [
    {"M": 200000, "K": 200000, "avg": 64},
    {"M": 100000, "K": 50000, "avg": 128},
    {"M": 300007, "K": 120000, "avg": 32},
    {"M": 65536, "K": 65536, "avg": 256},
    {"M": 150000, "K": 400000, "avg": 48},
]
SMALL_CASES = [{"M": 50, "K": 70, "avg": 8}, {"M": 20, "K": 300, "avg": 40}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    M, K, avg = case["M"], case["K"], case["avg"]
    nnz = M * avg
    return nnz * 8 + (M + 1) * 4 + K * 4 + M * 4


def flops(case):
    return 2 * case["M"] * case["avg"]
