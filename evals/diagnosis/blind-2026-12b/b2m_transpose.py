"""Out-of-place 2D transpose y = x.T (fp32, [M, N] -> [N, M]); planted: each program copies one contiguous input row into an output column, so every store is strided by M (uncoalesced)."""
import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    v = tl.load(x_ptr + row * N + cols, mask=mask)
    tl.store(y_ptr + cols * M + row, v, mask=mask)


def entry(x):
    M, N = x.shape
    y = torch.empty(N, M, device=x.device, dtype=x.dtype)
    BLOCK_N = 1024
    transpose_kernel[(M, triton.cdiv(N, BLOCK_N))](x, y, M, N, BLOCK_N=BLOCK_N, num_warps=4)
    return y


def reference(x):
    return x.t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    return [torch.randn(case["M"], case["N"], generator=g).to(device)]


CASES = [
    {"M": 8192, "N": 8192},
    {"M": 4096, "N": 16384},
    {"M": 12345, "N": 6789},
    {"M": 32768, "N": 1024},
    {"M": 2048, "N": 30000},
    {"M": 5000, "N": 5003},
]
SMALL_CASES = [{"M": 37, "N": 53}]


def bytes_moved(case):
    return 2 * 4 * case["M"] * case["N"]


def flops(case):
    return 0
