import torch, triton, triton.language as tl


@triton.jit
def _bias_grad_kernel(dy_ptr, part_ptr, T, N, stride_t, rows_per_prog, BLOCK_T: tl.constexpr,
                      BLOCK_N: tl.constexpr):
    # part[s, n] = sum over this program's slice of t of dy[t, n]
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    t_begin = pid_s * rows_per_prog
    t_end = tl.minimum(t_begin + rows_per_prog, T)
    acc = tl.zeros([BLOCK_T, BLOCK_N], dtype=tl.float32)
    for t0 in range(t_begin, t_end, BLOCK_T):
        rows = t0 + tl.arange(0, BLOCK_T)
        m = (rows < t_end)[:, None] & cmask[None, :]
        acc += tl.load(dy_ptr + rows[:, None] * stride_t + cols[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(part_ptr + pid_s * N + cols, tl.sum(acc, axis=0), mask=cmask)


def entry(dy):
    T, N = dy.shape
    BLOCK_T, BLOCK_N = 32, 128
    n_col = triton.cdiv(N, BLOCK_N)
    n_split = max(1, min(triton.cdiv(T, BLOCK_T), triton.cdiv(4 * 132, n_col)))
    rows_per_prog = triton.cdiv(triton.cdiv(T, n_split), BLOCK_T) * BLOCK_T
    n_split = triton.cdiv(T, rows_per_prog)
    part = torch.empty((n_split, N), device=dy.device, dtype=torch.float32)
    _bias_grad_kernel[(n_col, n_split)](dy, part, T, N, dy.stride(0), rows_per_prog, BLOCK_T=BLOCK_T,
                                        BLOCK_N=BLOCK_N)
    return part.sum(0)


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
