import torch
import triton
import triton.language as tl


# Single-token (decode) projection y = x @ W + b for a layer whose weight is
# stored as [in_features, out_features] (GPT-2 style Conv1D parameters).
# x: [1, K] bf16, W: [K, N] bf16, b: [N] bf16 -> y: [1, N] fp32.
@triton.jit
def _gemv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, K, N,
                 stride_wk, stride_wn,
                 BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    nm = n < N
    acc = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        km = k < K
        x = tl.load(x_ptr + k, mask=km, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + k[:, None] * stride_wk + n[None, :] * stride_wn,
                    mask=km[:, None] & nm[None, :], other=0.0).to(tl.float32)
        acc += x[:, None] * w
    y = tl.sum(acc, axis=0) + tl.load(b_ptr + n, mask=nm, other=0.0).to(tl.float32)
    tl.store(out_ptr + n, y, mask=nm)


def entry(x, weight, bias):
    K, N = weight.shape
    out = torch.empty((1, N), dtype=torch.float32, device=x.device)
    BLOCK_N = 32
    _gemv_kernel[(triton.cdiv(N, BLOCK_N),)](x, weight, bias, out, K, N,
                                             weight.stride(0), weight.stride(1),
                                             BLOCK_K=256, BLOCK_N=BLOCK_N)
    return out


def reference(x, weight, bias):
    return x.float() @ weight.float() + bias.float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    K, N = case["K"], case["N"]
    x = torch.randn((1, K), generator=g, dtype=torch.float32).to(torch.bfloat16)
    w = (torch.randn((K, N), generator=g, dtype=torch.float32) / K ** 0.5).to(torch.bfloat16)
    b = (0.1 * torch.randn((N,), generator=g, dtype=torch.float32)).to(torch.bfloat16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"K": 4096, "N": 16384},
    {"K": 5120, "N": 13824},
    {"K": 3584, "N": 18944},
    {"K": 6144, "N": 12288},
    {"K": 4096, "N": 11008},
    {"K": 8192, "N": 7168},
]

SMALL_CASES = [
    {"K": 96, "N": 40},
    {"K": 200, "N": 24},
]

TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return K * N * 2 + K * 2 + N * 2 + N * 4


def flops(case):
    return 2 * case["K"] * case["N"]


DTYPE_FLOPS = "bf16"
