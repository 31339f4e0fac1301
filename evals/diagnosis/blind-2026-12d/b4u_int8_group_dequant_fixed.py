import torch, triton, triton.language as tl


@triton.jit
def dequant_kernel(q_ptr, s_ptr, out_ptr, K,
                   stride_qn, stride_sn, stride_on,
                   GROUP: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[n, k] = q[n, k] * scale[n, k // GROUP]
    pid_k = tl.program_id(0)
    n = tl.program_id(1)
    cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = cols < K
    q = tl.load(q_ptr + n * stride_qn + cols, mask=mask, other=0).to(tl.float32)
    s = tl.load(s_ptr + n * stride_sn + cols // GROUP, mask=mask, other=0.0)
    tl.store(out_ptr + n * stride_on + cols, (q * s).to(out_ptr.dtype.element_ty), mask=mask)


def entry(q, scales):
    # q: [N, K] int8 weight, scales: [N, K // 128] fp32 group scales -> [N, K] bf16
    N, K = q.shape
    out = torch.empty((N, K), dtype=torch.bfloat16, device=q.device)
    BLOCK_K = 2048
    grid = (triton.cdiv(K, BLOCK_K), N)
    dequant_kernel[grid](q, scales, out, K, q.stride(0), scales.stride(0), out.stride(0),
                         GROUP=128, BLOCK_K=BLOCK_K, num_warps=4)
    return out


def reference(q, scales):
    s = scales.repeat_interleave(128, dim=1)
    return (q.float() * s).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    N, K = case["N"], case["K"]
    w = torch.randn(N, K, generator=g)
    wg = w.view(N, K // 128, 128)
    scales = wg.abs().amax(dim=-1) / 127.0
    q = torch.round(wg / scales[..., None]).clamp(-127, 127).to(torch.int8).view(N, K)
    return q.to(device), scales.to(device)


CASES = [
    {"N": 14336, "K": 4096},
    {"N": 4096, "K": 14336},
    {"N": 11008, "K": 4096},
    {"N": 5120, "K": 13824},
    {"N": 28672, "K": 8192},
    {"N": 7168, "K": 2560},
]
SMALL_CASES = [{"N": 6, "K": 384}, {"N": 3, "K": 2304}]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    N, K = case["N"], case["K"]
    return N * K + N * (K // 128) * 4 + N * K * 2


def flops(case):
    return case["N"] * case["K"]
