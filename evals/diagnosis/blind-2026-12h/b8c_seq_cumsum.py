import torch, triton, triton.language as tl


@triton.jit
def cumsum_time_kernel(x_ptr, out_ptr, T, C, stride_xb, stride_xt, stride_ob, stride_ot,
                       BLOCK_T: tl.constexpr):
    # out[b, t, c] = sum_{s <= t} x[b, s, c], accumulated in fp32
    pid = tl.program_id(0)
    b = pid // C
    c = pid % C
    offs_t = tl.arange(0, BLOCK_T)
    x_base = x_ptr + b * stride_xb + c
    o_base = out_ptr + b * stride_ob + c
    carry = tl.zeros((), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + offs_t
        m = t < T
        v = tl.load(x_base + t * stride_xt, mask=m, other=0.0).to(tl.float32)
        cs = tl.cumsum(v, axis=0) + carry
        tl.store(o_base + t * stride_ot, cs, mask=m)
        carry += tl.sum(v, axis=0)


def entry(x):
    # x: [B, T, C]; cumulative sum over T
    B, T, C = x.shape
    out = torch.empty((B, T, C), device=x.device, dtype=torch.float32)
    grid = (B * C,)
    cumsum_time_kernel[grid](x, out, T, C, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                             BLOCK_T=1024, num_warps=4)
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
