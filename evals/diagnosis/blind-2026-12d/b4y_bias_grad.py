import torch, triton, triton.language as tl


@triton.jit
def _bias_grad_kernel(dy_ptr, db_ptr, T, N, stride_t, BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr):
    # db[n] = sum_t dy[t, n]
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_T, BLOCK_N], dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        rows = t0 + tl.arange(0, BLOCK_T)
        m = (rows < T)[:, None] & cmask[None, :]
        acc += tl.load(dy_ptr + rows[:, None] * stride_t + cols[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(db_ptr + cols, tl.sum(acc, axis=0), mask=cmask)


def entry(dy):
    T, N = dy.shape
    db = torch.empty((N,), device=dy.device, dtype=torch.float32)
    BLOCK_T, BLOCK_N = 32, 128
    _bias_grad_kernel[(triton.cdiv(N, BLOCK_N),)](dy, db, T, N, dy.stride(0), BLOCK_T=BLOCK_T, BLOCK_N=BLOCK_N)
    return db


def reference(dy):
    return dy.double().sum(0).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    dy = torch.randn(case["T"], case["N"], generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (dy.to(device),)


CASES = [
    {"T": 16384, "N": 4096},
    {"T": 8192, "N": 8192},
    {"T": 32768, "N": 2048},
    {"T": 12000, "N": 5120},
    {"T": 20000, "N": 3072},
    {"T": 9000, "N": 6144},
]
SMALL_CASES = [{"T": 300, "N": 200}, {"T": 77, "N": 384}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return case["T"] * case["N"] * 2 + case["N"] * 4


def flops(case):
    return case["T"] * case["N"]
