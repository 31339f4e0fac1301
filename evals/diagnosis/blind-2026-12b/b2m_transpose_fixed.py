"""Out-of-place 2D transpose y = x.T (fp32, [M, N] -> [N, M]); fixed: 64x64 tiles are loaded coalesced and converted through shared memory so stores are coalesced too."""
import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    # the compiler stages the tile through shared memory so the store is coalesced along M
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], v, mask=mask)


def entry(x):
    M, N = x.shape
    y = torch.empty(N, M, device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N = 64, 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    transpose_kernel[grid](x, y, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
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
