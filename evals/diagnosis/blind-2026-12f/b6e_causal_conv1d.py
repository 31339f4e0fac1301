import torch
import torch.nn.functional as F
import triton
import triton.language as tl


# Depthwise causal conv1d + SiLU (the short convolution in Mamba / Hyena style
# blocks).  x: [B, L, D] activations, weight: [D, K], bias: [D].
# out[b, l, d] = silu(bias[d] + sum_k weight[d, k] * x[b, l - (K - 1) + k, d])
@triton.jit
def _causal_conv1d_kernel(x_ptr, w_ptr, bias_ptr, out_ptr,
                          L, D,
                          stride_xb, stride_xl, stride_xd,
                          stride_ob, stride_ol, stride_od,
                          K: tl.constexpr, BLOCK_L: tl.constexpr):
    pid_bd = tl.program_id(0)
    pid_l = tl.program_id(1)
    b = pid_bd // D
    d = pid_bd % D

    l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    lmask = l < L

    acc = tl.zeros([BLOCK_L], dtype=tl.float32) + tl.load(bias_ptr + d)
    x_base = x_ptr + b * stride_xb + d * stride_xd
    for k in tl.static_range(K):
        w = tl.load(w_ptr + d * K + k)
        src = l - (K - 1) + k
        xv = tl.load(x_base + src * stride_xl, mask=lmask & (src >= 0), other=0.0)
        acc += w * xv.to(tl.float32)

    y = acc * tl.sigmoid(acc)
    o_ptrs = out_ptr + b * stride_ob + d * stride_od + l * stride_ol
    tl.store(o_ptrs, y.to(out_ptr.dtype.element_ty), mask=lmask)


def entry(x, weight, bias):
    B, L, D = x.shape
    K = weight.shape[1]
    out = torch.empty_like(x)
    BLOCK_L = 512
    grid = (B * D, triton.cdiv(L, BLOCK_L))
    _causal_conv1d_kernel[grid](x, weight, bias, out, L, D,
                                x.stride(0), x.stride(1), x.stride(2),
                                out.stride(0), out.stride(1), out.stride(2),
                                K=K, BLOCK_L=BLOCK_L)
    return out


def reference(x, weight, bias):
    B, L, D = x.shape
    K = weight.shape[1]
    y = F.conv1d(x.float().transpose(1, 2), weight[:, None, :].float(), bias.float(),
                 padding=K - 1, groups=D)[..., :L]
    y = F.silu(y)
    return y.transpose(1, 2).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D, K = case["B"], case["L"], case["D"], case["K"]
    x = torch.randn((B, L, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    weight = torch.randn((D, K), generator=g, dtype=torch.float32) * 0.5
    bias = torch.randn((D,), generator=g, dtype=torch.float32) * 0.1
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"B": 4, "L": 4096, "D": 4096, "K": 4},
    {"B": 8, "L": 2048, "D": 2560, "K": 4},
    {"B": 2, "L": 8192, "D": 5120, "K": 4},
    {"B": 16, "L": 1000, "D": 3072, "K": 4},
    {"B": 3, "L": 6000, "D": 2048, "K": 4},
    {"B": 6, "L": 3000, "D": 1536, "K": 4},
]

SMALL_CASES = [
    {"B": 2, "L": 37, "D": 48, "K": 4},
    {"B": 1, "L": 100, "D": 24, "K": 3},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, L, D, K = case["B"], case["L"], case["D"], case["K"]
    return 2 * B * L * D * 2 + D * K * 4 + D * 4


def flops(case):
    B, L, D, K = case["B"], case["L"], case["D"], case["K"]
    return B * L * D * (2 * K + 4)
