import torch, triton, triton.language as tl


@triton.jit
def cumsum_time_kernel(x_ptr, out_ptr, T, C, stride_xb, stride_xt, stride_ob, stride_ot,
                       BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    # out[b, t, c] = sum_{s <= t} x[b, s, c], accumulated in fp32
    b = tl.program_id(0)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_t = tl.arange(0, BLOCK_T)
    cm = offs_c < C
    x_base = x_ptr + b * stride_xb + offs_c[None, :]
    o_base = out_ptr + b * stride_ob + offs_c[None, :]
    carry = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + offs_t
        m = (t[:, None] < T) & cm[None, :]
        v = tl.load(x_base + t[:, None] * stride_xt, mask=m, other=0.0).to(tl.float32)
        cs = tl.cumsum(v, axis=0) + carry[None, :]
        tl.store(o_base + t[:, None] * stride_ot, cs, mask=m)
        carry += tl.sum(v, axis=0)


def entry(x):
    # x: [B, T, C]; cumulative sum over T
    B, T, C = x.shape
    assert x.stride(2) == 1
    out = torch.empty((B, T, C), device=x.device, dtype=torch.float32)
    BLOCK_T, BLOCK_C = 256, 16
    grid = (B, triton.cdiv(C, BLOCK_C))
    cumsum_time_kernel[grid](x, out, T, C, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                             BLOCK_T=BLOCK_T, BLOCK_C=BLOCK_C, num_warps=8)
    return out


def reference(x):
    return torch.cumsum(x.float(), dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, T, C = case["B"], case["T"], case["C"]
    x = torch.randn(B, T, C, generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"B": 8, "T": 4096, "C": 1024},
    {"B": 4, "T": 8192, "C": 768},
    {"B": 16, "T": 2048, "C": 1536},
    {"B": 2, "T": 16384, "C": 1000},
    {"B": 32, "T": 1000, "C": 2048},
    {"B": 6, "T": 5000, "C": 1280},
]
SMALL_CASES = [{"B": 2, "T": 300, "C": 40}, {"B": 1, "T": 1100, "C": 7}]
TOLERANCES = {"float32": (2e-2, 2e-3)}


def bytes_moved(case):
    B, T, C = case["B"], case["T"], case["C"]
    return B * T * C * (2 + 4)


def flops(case):
    B, T, C = case["B"], case["T"], case["C"]
    return B * T * C
