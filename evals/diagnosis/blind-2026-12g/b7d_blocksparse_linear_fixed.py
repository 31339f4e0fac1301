import torch
import triton
import triton.language as tl

BLOCK_K = 64
BLOCK_N = 128


@triton.jit
def _bsr_lut_kernel(layout_ptr, lut_ptr, cnt_ptr, KB, NB, KB_P2: tl.constexpr):
    # per block-column: ascending list of active block-rows and their count
    pid_n = tl.program_id(0)
    kbs = tl.arange(0, KB_P2)
    flags = tl.load(layout_ptr + kbs * NB + pid_n, mask=kbs < KB, other=0) != 0
    f = flags.to(tl.int32)
    pos = tl.cumsum(f, 0) - 1
    tl.store(lut_ptr + pid_n * KB + pos, kbs, mask=flags)
    tl.store(cnt_ptr + pid_n, tl.sum(f, 0))


@triton.jit
def _bsr_matmul_kernel(
    x_ptr, w_ptr, lut_ptr, cnt_ptr, y_ptr,
    M, N, K, KB, NB,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # y = x @ (w masked by a [K/BLOCK_K, N/BLOCK_N] block layout)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_in_group = GROUP_M * NB
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * K + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * N + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    cnt = tl.load(cnt_ptr + pid_n)
    for i in range(0, cnt):
        kb = tl.load(lut_ptr + pid_n * KB + i)
        a = tl.load(x_ptrs + kb * BLOCK_K)
        b = tl.load(w_ptrs + kb * BLOCK_K * N)
        acc = tl.dot(a, b, acc)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    y_ptrs = y_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=offs_m[:, None] < M)


def entry(x, w, layout):
    M, K = x.shape
    N = w.shape[1]
    KB, NB = layout.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    lut = torch.empty((NB, KB), device=x.device, dtype=torch.int32)
    cnt = torch.empty((NB,), device=x.device, dtype=torch.int32)
    _bsr_lut_kernel[(NB,)](layout, lut, cnt, KB, NB, KB_P2=triton.next_power_of_2(KB))
    BLOCK_M = 128
    grid = (triton.cdiv(M, BLOCK_M) * NB,)
    _bsr_matmul_kernel[grid](
        x, w, lut, cnt, y, M, N, K, KB, NB,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, w, layout):
    mask = layout.bool().repeat_interleave(BLOCK_K, 0).repeat_interleave(BLOCK_N, 1)
    return (x.float() @ (w.float() * mask)).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    M, K, N, density = case["M"], case["K"], case["N"], case["density"]
    x = torch.randn((M, K), generator=g, dtype=torch.float32)
    w = torch.randn((K, N), generator=g, dtype=torch.float32) * (density * K) ** -0.5
    layout = (torch.rand((K // BLOCK_K, N // BLOCK_N), generator=g) < density).to(torch.int32)
    return (x.to(torch.float16).to(device), w.to(torch.float16).to(device), layout.to(device))


CASES = [
    {"M": 4096, "K": 8192, "N": 8192, "density": 0.5},
    {"M": 8192, "K": 4096, "N": 4096, "density": 0.25},
    {"M": 3000, "K": 6144, "N": 10240, "density": 0.5},
    {"M": 6000, "K": 5120, "N": 3840, "density": 0.3},
    {"M": 2048, "K": 12288, "N": 4096, "density": 0.5},
    {"M": 12000, "K": 2048, "N": 6144, "density": 0.6},
]
SMALL_CASES = [
    {"M": 40, "K": 256, "N": 256, "density": 0.5},
    {"M": 130, "K": 192, "N": 384, "density": 0.4},
]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    M, K, N, d = case["M"], case["K"], case["N"], case["density"]
    return 2 * (M * K + int(d * K * N) + M * N) + 4 * (K // BLOCK_K) * (N // BLOCK_N)


def flops(case):
    M, K, N, d = case["M"], case["K"], case["N"], case["density"]
    return int(2 * M * N * K * d)


DTYPE_FLOPS = "fp16"
