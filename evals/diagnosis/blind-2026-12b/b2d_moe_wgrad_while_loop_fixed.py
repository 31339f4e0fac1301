"""fp16 MoE expert weight-gradient grouped GEMM dW[e] = X[tokens of e]^T @ dY[tokens of e] (ragged token ranges from offsets); fixed: the ragged token reduction is a `for ... in range(start, end, BLOCK_T)` loop, which Triton software-pipelines (num_stages=3)."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_wgrad_kernel(x_ptr, dy_ptr, off_ptr, dw_ptr, K, N,
                     stride_xt, stride_dyt, stride_we, stride_wk,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)
    e = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_t = tl.arange(0, BLOCK_T)
    start = tl.load(off_ptr + e)
    end = tl.load(off_ptr + e + 1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # ragged range with runtime bounds: still a counted loop, so the loads are pipelined
    for t in range(start, end, BLOCK_T):
        rows = t + offs_t
        rmask = rows < end
        xt = tl.load(x_ptr + rows[None, :] * stride_xt + offs_m[:, None],
                     mask=rmask[None, :] & (offs_m[:, None] < K), other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * stride_dyt + offs_n[None, :],
                     mask=rmask[:, None] & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(xt, dy, acc)
    w_ptrs = dw_ptr + e * stride_we + offs_m[:, None] * stride_wk + offs_n[None, :]
    tl.store(w_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < K) & (offs_n[None, :] < N))


def entry(x, dy, offsets):
    T, K = x.shape
    N = dy.shape[1]
    E = offsets.numel() - 1
    dw = torch.empty((E, K, N), device=x.device, dtype=x.dtype)
    BM, BN, BT = 128, 256, 64
    grid = (triton.cdiv(K, BM) * triton.cdiv(N, BN), E)
    moe_wgrad_kernel[grid](x, dy, offsets, dw, K, N, x.stride(0), dy.stride(0), dw.stride(0), dw.stride(1),
                           BLOCK_M=BM, BLOCK_N=BN, BLOCK_T=BT, num_warps=8, num_stages=3)
    return dw


def reference(x, dy, offsets):
    E = offsets.numel() - 1
    off = offsets.tolist()
    out = [x[off[e]:off[e + 1]].float().t() @ dy[off[e]:off[e + 1]].float() for e in range(E)]
    return torch.stack(out).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, K, N, E = case["T"], case["K"], case["N"], case["E"]
    x = (torch.randn(T, K, generator=g, dtype=torch.float32) / T ** 0.25).to(torch.float16)
    dy = (torch.randn(T, N, generator=g, dtype=torch.float32) / T ** 0.25).to(torch.float16)
    probs = torch.rand(E, generator=g) + 0.5
    expert = torch.multinomial(probs, T, replacement=True, generator=g)
    counts = torch.bincount(expert, minlength=E)
    offsets = torch.zeros(E + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(counts, 0).to(torch.int32)
    return (x.to(device), dy.to(device), offsets.to(device))


CASES = [
    {"T": 16384, "K": 2048, "N": 1408, "E": 8},
    {"T": 131072, "K": 1024, "N": 512, "E": 64},
    {"T": 20000, "K": 4096, "N": 1024, "E": 16},
    {"T": 12345, "K": 2880, "N": 2880, "E": 32},
    {"T": 65536, "K": 768, "N": 768, "E": 8},
]
SMALL_CASES = [{"T": 150, "K": 40, "N": 24, "E": 3}]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    T, K, N, E = case["T"], case["K"], case["N"], case["E"]
    return 2 * (T * K + T * N + E * K * N)


def flops(case):
    return 2 * case["T"] * case["K"] * case["N"]
