import torch
import triton
import triton.language as tl


@triton.jit
def masked_mean_pool_kernel(
    x_ptr, m_ptr, out_ptr,
    T, D,
    stride_xb, stride_xt,
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # out[b, d] = sum_t x[b, t, d] * mask[b, t] / sum_t mask[b, t]
    b = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = d < D
    acc = tl.zeros((BLOCK_T, BLOCK_D), dtype=tl.float32)
    cnt = tl.zeros((BLOCK_T,), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        t_ok = t < T
        w = tl.load(m_ptr + b * T + t, mask=t_ok, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + b * stride_xb + t[:, None] * stride_xt + d[None, :],
                    mask=t_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
        acc += x * w[:, None]
        cnt += w
    total = tl.sum(acc, axis=0) / tl.maximum(tl.sum(cnt, axis=0), 1e-6)
    tl.store(out_ptr + b * D + d, total.to(out_ptr.dtype.element_ty), mask=d_ok)


def entry(x, mask):
    B, T, D = x.shape
    out = torch.empty((B, D), device=x.device, dtype=x.dtype)
    BLOCK_D = 64
    masked_mean_pool_kernel[(B, triton.cdiv(D, BLOCK_D))](
        x, mask, out, T, D, x.stride(0), x.stride(1), BLOCK_T=128, BLOCK_D=BLOCK_D, num_warps=4)
    return out


def reference(x, mask):
    w = mask.float()
    s = (x.float() * w[:, :, None]).sum(dim=1)
    return (s / w.sum(dim=1, keepdim=True).clamp_min(1e-6)).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, T, D = case["B"], case["T"], case["D"]
    x = torch.randn(B, T, D, generator=g, dtype=torch.float32)
    lens = torch.randint(T // 2, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None, :] < lens[:, None]).to(torch.bfloat16)
    return x.to(torch.bfloat16).to(device), mask.to(device)


CASES = [
    {"B": 32, "T": 2048, "D": 1024},
    {"B": 64, "T": 512, "D": 4096},
    {"B": 16, "T": 4096, "D": 768},
    {"B": 48, "T": 1000, "D": 2560},
    {"B": 8, "T": 8192, "D": 1536},
    {"B": 128, "T": 384, "D": 3072},
]
SMALL_CASES = [
    {"B": 3, "T": 200, "D": 24},
    {"B": 2, "T": 57, "D": 40},
]
TOLERANCES = {"bfloat16": (1e-2, 1e-2)}


def bytes_moved(case):
    B, T, D = case["B"], case["T"], case["D"]
    return 2 * (B * T * D + B * T + B * D)


def flops(case):
    B, T, D = case["B"], case["T"], case["D"]
    return 2 * B * T * D
