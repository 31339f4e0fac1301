import torch
import triton
import triton.language as tl


# Single-token (decode) projection y = x @ W + b for a layer whose weight is
# stored as [in_features, out_features] (GPT-2 style Conv1D parameters).
# x: [1, K] bf16, W: [K, N] bf16, b: [N] bf16 -> y: [1, N] fp32.
@triton.jit
def _gemv_kernel(x_ptr, w_ptr, b_ptr, out_ptr, K,
                 stride_wn, stride_wk,
                 BLOCK_K: tl.constexpr):
    n = tl.program_id(0)
    acc = tl.zeros([BLOCK_K], dtype=tl.float32)
    w_row = w_ptr + n * stride_wn
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        km = k < K
        x = tl.load(x_ptr + k, mask=km, other=0.0).to(tl.float32)
        w = tl.load(w_row + k * stride_wk, mask=km, other=0.0).to(tl.float32)
        acc += x * w
    y = tl.sum(acc, axis=0) + tl.load(b_ptr + n).to(tl.float32)
    tl.store(out_ptr + n, y)


def entry(x, weight, bias):
    K, N = weight.shape
    out = torch.empty((1, N), dtype=torch.float32, device=x.device)
    # weight[k, n] is element (n, k) of the [N, K] operand
    _gemv_kernel[(N,)](x, weight, bias, out, K,
                       weight.stride(1), weight.stride(0),
                       BLOCK_K=1024)
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
