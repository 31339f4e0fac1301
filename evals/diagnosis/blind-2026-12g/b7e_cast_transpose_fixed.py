import torch
import triton
import triton.language as tl


@triton.jit
def cast_transpose_kernel(
    x_ptr, scale_ptr, q_ptr, qt_ptr,
    M, K,
    stride_xm, stride_qm, stride_qtk,
    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # q = int8(round(x * scale)) and its transpose qt = q^T, for the forward and backward GEMMs
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    scale = tl.load(scale_ptr)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = (offs_m[:, None] < M) & (offs_k[None, :] < K)
    x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :], mask=mask, other=0.0)
    v = tl.floor(x.to(tl.float32) * scale + 0.5)
    q = tl.minimum(tl.maximum(v, -127.0), 127.0).to(tl.int8)
    tl.store(q_ptr + offs_m[:, None] * stride_qm + offs_k[None, :], q, mask=mask)
    qt = tl.trans(q)
    mask_t = (offs_k[:, None] < K) & (offs_m[None, :] < M)
    tl.store(qt_ptr + offs_k[:, None] * stride_qtk + offs_m[None, :], qt, mask=mask_t)


def entry(x, scale):
    M, K = x.shape
    q = torch.empty((M, K), device=x.device, dtype=torch.int8)
    qt = torch.empty((K, M), device=x.device, dtype=torch.int8)
    BLOCK_M = 64
    BLOCK_K = 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(K, BLOCK_K))
    cast_transpose_kernel[grid](
        x, scale, q, qt, M, K,
        x.stride(0), q.stride(0), qt.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K,
    )
    return q, qt


def reference(x, scale):
    q = torch.floor(x.float() * scale + 0.5).clamp(-127, 127).to(torch.int8)
    return q, q.t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K = case["M"], case["K"]
    x = torch.randn(M, K, generator=g, dtype=torch.float32).to(torch.bfloat16)
    scale = (127.0 / x.float().abs().amax()).reshape(1).float()
    return (x.to(device), scale.to(device))


CASES = [
    {"M": 8192, "K": 4096},
    {"M": 4096, "K": 14336},
    {"M": 16384, "K": 2048},
    {"M": 6000, "K": 5120},
    {"M": 12288, "K": 3072},
    {"M": 3072, "K": 11008},
]
SMALL_CASES = [
    {"M": 48, "K": 80},
    {"M": 33, "K": 64},
]
TOLERANCES = {"int8": (1, 0)}


def bytes_moved(case):
    M, K = case["M"], case["K"]
    return M * K * 2 + 2 * M * K + 4


def flops(case):
    return case["M"] * case["K"]
