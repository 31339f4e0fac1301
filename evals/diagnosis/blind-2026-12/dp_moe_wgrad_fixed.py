"""MoE expert weight gradient: for each expert e, dW[e] = dY[s_e:s_{e+1}]^T @ X[s_e:s_{e+1}] over its contiguous (expert-sorted) token segment, fp16 inputs, fp32 grads. Planted: the ragged token loop is written as a while loop, which the Triton software pipeliner does not handle, so the loads are never multi-buffered."""
import torch
import triton
import triton.language as tl


@triton.jit
def _moe_wgrad_kernel(
    X, DY, Offsets, DW,
    D_in, D_out,
    stride_xt, stride_dyt,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    e = tl.program_id(1)
    num_pid_n = tl.cdiv(D_in, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    start = tl.load(Offsets + e)
    end = tl.load(Offsets + e + 1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)   # rows of dW[e]: output features
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)   # cols of dW[e]: input features
    offs_k = tl.arange(0, BLOCK_K)                      # tokens
    mask_m = offs_m < D_out
    mask_n = offs_n < D_in

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for t in range(start, end, BLOCK_K):
        rows = t + offs_k
        row_ok = rows < end
        dy_t = tl.load(DY + rows[None, :] * stride_dyt + offs_m[:, None],
                       mask=row_ok[None, :] & mask_m[:, None], other=0.0)   # [BLOCK_M, BLOCK_K]
        x = tl.load(X + rows[:, None] * stride_xt + offs_n[None, :],
                    mask=row_ok[:, None] & mask_n[None, :], other=0.0)      # [BLOCK_K, BLOCK_N]
        acc = tl.dot(dy_t, x, acc)

    dw_ptrs = DW + e.to(tl.int64) * D_out * D_in + offs_m[:, None] * D_in + offs_n[None, :]
    tl.store(dw_ptrs, acc, mask=mask_m[:, None] & mask_n[None, :])


def entry(x, dy, offsets):
    T, D_in = x.shape
    D_out = dy.shape[1]
    E = offsets.numel() - 1
    dw = torch.empty((E, D_out, D_in), device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    grid = (triton.cdiv(D_out, BLOCK_M) * triton.cdiv(D_in, BLOCK_N), E)
    _moe_wgrad_kernel[grid](
        x, dy, offsets, dw,
        D_in, D_out,
        x.stride(0), dy.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return dw


def reference(x, dy, offsets):
    E = offsets.numel() - 1
    off = offsets.tolist()
    dw = torch.empty((E, dy.shape[1], x.shape[1]), device=x.device, dtype=torch.float32)
    for e in range(E):
        s, t = off[e], off[e + 1]
        dw[e] = dy[s:t].float().T @ x[s:t].float()
    return dw


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, E, D_in, D_out = case["T"], case["E"], case["D_in"], case["D_out"]
    # skewed router: some experts get many tokens, a few get almost none
    logits = torch.randn(E, generator=g) * 0.8
    expert = torch.multinomial(torch.softmax(logits, 0), T, replacement=True, generator=g)
    counts = torch.bincount(expert, minlength=E)
    offsets = torch.zeros(E + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(counts, 0).to(torch.int32)
    x = torch.randn(T, D_in, generator=g).to(torch.float16)
    dy = (torch.randn(T, D_out, generator=g) * 0.05).to(torch.float16)
    return x.to(device), dy.to(device), offsets.to(device)


CASES = [
    {"T": 32768, "E": 8, "D_in": 2048, "D_out": 1024},
    {"T": 65536, "E": 64, "D_in": 1024, "D_out": 512},
    {"T": 20000, "E": 16, "D_in": 1536, "D_out": 768},
    {"T": 49152, "E": 32, "D_in": 2816, "D_out": 1024},
]
SMALL_CASES = [
    {"T": 150, "E": 4, "D_in": 64, "D_out": 48},
    {"T": 300, "E": 3, "D_in": 320, "D_out": 136},
]
TOLERANCES = {"float32": (1e-2, 1e-3)}


def bytes_moved(case):
    T, E, D_in, D_out = case["T"], case["E"], case["D_in"], case["D_out"]
    return 2 * T * (D_in + D_out) + 4 * (E + 1) + 4 * E * D_in * D_out


def flops(case):
    return 2 * case["T"] * case["D_in"] * case["D_out"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
