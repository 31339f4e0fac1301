import torch, triton, triton.language as tl


@triton.jit
def _csr_spmv_kernel(rowptr_ptr, col_ptr, val_ptr, x_ptr, y_ptr, BLOCK: tl.constexpr):
    # y[row] = sum_k val[k] * x[col[k]] over the row's nonzeros
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range(start, end, BLOCK):
        k = k0 + tl.arange(0, BLOCK)
        m = k < end
        c = tl.load(col_ptr + k, mask=m, other=0)
        v = tl.load(val_ptr + k, mask=m, other=0.0)
        acc += v * tl.load(x_ptr + c, mask=m, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


def entry(rowptr, col, val, x):
    M = rowptr.numel() - 1
    y = torch.empty((M,), device=x.device, dtype=torch.float32)
    _csr_spmv_kernel[(M,)](rowptr, col, val, x, y, BLOCK=64)
    return y


def reference(rowptr, col, val, x):
    M = rowptr.numel() - 1
    counts = (rowptr[1:] - rowptr[:-1]).long()
    rows = torch.repeat_interleave(torch.arange(M, device=x.device), counts)
    prod = val.double() * x.double()[col.long()]
    return torch.zeros(M, dtype=torch.float64, device=x.device).index_add_(0, rows, prod).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N, L = case["M"], case["N"], case["L"]
    lens = torch.randint(L // 2, L + L // 2 + 1, (M,), generator=g)
    rowptr = torch.zeros(M + 1, dtype=torch.int64)
    rowptr[1:] = torch.cumsum(lens, 0)
    nnz = int(rowptr[-1])
    col = torch.randint(0, N, (nnz,), generator=g, dtype=torch.int64)
    val = torch.randn(nnz, generator=g, dtype=torch.float32)
    x = torch.randn(N, generator=g, dtype=torch.float32)
    return (rowptr.to(torch.int32).to(device), col.to(torch.int32).to(device), val.to(device), x.to(device))


CASES = [
    {"M": 262144, "N": 262144, "L": 64},
    {"M": 100003, "N": 500000, "L": 128},
    {"M": 500000, "N": 200000, "L": 32},
    {"M": 65536, "N": 1000000, "L": 256},
    {"M": 300000, "N": 300007, "L": 48},
]
SMALL_CASES = [{"M": 40, "N": 500, "L": 16}, {"M": 13, "N": 97, "L": 70}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    nnz = case["M"] * case["L"]
    return nnz * 8 + (case["M"] + 1) * 4 + case["N"] * 4 + case["M"] * 4


def flops(case):
    return 2 * case["M"] * case["L"]
