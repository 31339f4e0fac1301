import torch
import triton
import triton.language as tl


@triton.jit
def dequant_t_kernel(q_ptr, s_ptr, out_ptr, N, K, stride_qn, stride_ok,
                     BLOCK_N: tl.constexpr):
    # out[k, n] = bf16(q[n, k] * scale[n]); one program fills a slice of output row k
    k = tl.program_id(0)
    n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = n < N
    q = tl.load(q_ptr + n * stride_qn + k, mask=mask, other=0)
    s = tl.load(s_ptr + n, mask=mask, other=0.0)
    w = q.to(tl.float32) * s
    tl.store(out_ptr + k * stride_ok + n, w.to(tl.bfloat16), mask=mask)


def entry(qweight, scale):
    # qweight: int8 [N, K] (row n = output channel), scale: fp32 [N]
    # returns the dequantized weight laid out K-major: bf16 [K, N]
    N, K = qweight.shape
    out = torch.empty((K, N), device=qweight.device, dtype=torch.bfloat16)
    BLOCK_N = 1024
    grid = (K, triton.cdiv(N, BLOCK_N))
    dequant_t_kernel[grid](qweight, scale, out, N, K, qweight.stride(0), out.stride(0),
                           BLOCK_N=BLOCK_N, num_warps=4)
    return out


def reference(qweight, scale):
    return (qweight.float() * scale.float()[:, None]).to(torch.bfloat16).t().contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, K = case["N"], case["K"]
    w = torch.randn(N, K, generator=g, dtype=torch.float32)
    scale = w.abs().amax(dim=1) / 127.0
    q = torch.clamp(torch.round(w / scale[:, None]), -127, 127).to(torch.int8)
    return q.to(device), scale.to(device)


CASES = [
    {"N": 8192, "K": 8192},
    {"N": 14336, "K": 4096},
    {"N": 4096, "K": 14336},
    {"N": 11008, "K": 5120},
    {"N": 13824, "K": 5120},
    {"N": 6144, "K": 9216},
]
SMALL_CASES = [{"N": 96, "K": 80}, {"N": 48, "K": 160}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    N, K = case["N"], case["K"]
    return N * K + 4 * N + 2 * N * K


def flops(case):
    return case["N"] * case["K"]
