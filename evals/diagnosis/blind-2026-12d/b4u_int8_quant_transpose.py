import torch, triton, triton.language as tl


@triton.jit
def quant_transpose_kernel(w_ptr, s_ptr, q_ptr, K, N,
                           stride_wk, stride_qn,
                           BLOCK_K: tl.constexpr):
    # one output row (= one input column / output channel) per program along axis 0
    n = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = offs_k < K
    inv_s = 1.0 / tl.load(s_ptr + n)
    w = tl.load(w_ptr + offs_k * stride_wk + n, mask=mask, other=0.0).to(tl.float32)
    q = tl.floor(w * inv_s + 0.5)
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(q_ptr + n * stride_qn + offs_k, q.to(tl.int8), mask=mask)


def entry(w, scales):
    # w: [K, N] bf16 weight, scales: [N] fp32 per-output-channel scales
    # returns q: [N, K] int8 (K-major layout for the int8 GEMM)
    K, N = w.shape
    q = torch.empty((N, K), dtype=torch.int8, device=w.device)
    BLOCK_K = 1024
    grid = (N, triton.cdiv(K, BLOCK_K))
    quant_transpose_kernel[grid](w, scales, q, K, N, w.stride(0), q.stride(0),
                                 BLOCK_K=BLOCK_K, num_warps=4)
    return q


def reference(w, scales):
    inv_s = 1.0 / scales
    q = torch.floor(w.float() * inv_s[None, :] + 0.5).clamp(-127, 127)
    return q.to(torch.int8).t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    K, N = case["K"], case["N"]
    w = torch.randn(K, N, generator=g, dtype=torch.float32)
    scales = w.abs().amax(dim=0) / 127.0
    return w.to(torch.bfloat16).to(device), scales.to(device)


CASES = [
    {"K": 4096, "N": 4096},
    {"K": 4096, "N": 14336},
    {"K": 14336, "N": 4096},
    {"K": 5120, "N": 13824},
    {"K": 2880, "N": 7168},
    {"K": 8192, "N": 3072},
]
SMALL_CASES = [{"K": 48, "N": 80}, {"K": 96, "N": 32}]
TOLERANCES = {"int8": (1, 0)}


def bytes_moved(case):
    K, N = case["K"], case["N"]
    return K * N * 2 + K * N + N * 4


def flops(case):
    return 2 * case["K"] * case["N"]
