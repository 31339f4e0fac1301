import torch, triton, triton.language as tl

# Bias gradient of a linear layer: db[n] = sum_m dy[m, n].


@triton.jit
def _bias_grad_kernel(dy_ptr, db_ptr, M, N, stride_m, BLOCK_M: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        g = tl.load(dy_ptr + rows * stride_m + col, mask=rows < M, other=0.0)
        acc += g.to(tl.float32)
    tl.store(db_ptr + col, tl.sum(acc, axis=0))


def entry(dy):
    M, N = dy.shape
    db = torch.empty(N, device=dy.device, dtype=torch.float32)
    _bias_grad_kernel[(N,)](dy, db, M, N, dy.stride(0), BLOCK_M=512, num_warps=4)
    return db


def reference(dy):
    return dy.float().sum(dim=0)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    dy = torch.randn(case["M"], case["N"], generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (dy.to(device),)


CASES = [
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 12288},
    {"M": 32768, "N": 2048},
    {"M": 12000, "N": 5120},
    {"M": 4000, "N": 14336},
    {"M": 20000, "N": 3000},
]
SMALL_CASES = [{"M": 100, "N": 70}, {"M": 64, "N": 33}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    return case["M"] * case["N"] * 2 + case["N"] * 4


def flops(case):
    return case["M"] * case["N"]
