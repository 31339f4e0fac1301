"""Per-head RMSNorm (qk-norm) over short fp16 rows of head_dim elements; planted: one 4-warp program per row, so millions of tiny programs each touch ~128-256 bytes."""
import torch
import triton
import triton.language as tl


@triton.jit
def rmsnorm_row_kernel(x_ptr, w_ptr, out_ptr, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / N
    y = x * tl.rsqrt(ms + eps) * w
    tl.store(out_ptr + row * N + cols, y.to(tl.float16), mask=mask)


def entry(x, w):
    N = x.shape[-1]
    x2 = x.reshape(-1, N)
    M = x2.shape[0]
    out = torch.empty_like(x2)
    BLOCK_N = triton.next_power_of_2(N)
    rmsnorm_row_kernel[(M,)](x2, w, out, N, 1e-6, BLOCK_N=BLOCK_N, num_warps=4)
    return out.reshape(x.shape)


def reference(x, w):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    return y.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["tokens"], case["heads"], case["head_dim"], generator=g).to(torch.float16)
    w = torch.randn(case["head_dim"], generator=g).to(torch.float16)
    return (x.to(device), w.to(device))


CASES = [
    {"tokens": 32768, "heads": 32, "head_dim": 128},
    {"tokens": 16384, "heads": 64, "head_dim": 64},
    {"tokens": 30001, "heads": 40, "head_dim": 96},
    {"tokens": 65536, "heads": 16, "head_dim": 80},
    {"tokens": 12289, "heads": 48, "head_dim": 128},
]
SMALL_CASES = [{"tokens": 7, "heads": 3, "head_dim": 96}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    n = case["tokens"] * case["heads"] * case["head_dim"]
    return 2 * n * 2 + 2 * case["head_dim"]


def flops(case):
    return 4 * case["tokens"] * case["heads"] * case["head_dim"]
