import torch
import triton
import triton.language as tl


@triton.jit
def _conv3x3_nhwc_kernel(x_ptr, w_ptr, b_ptr, y_ptr, NB, H, W, C, CO,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # 3x3 convolution, stride 1, padding 1, as an implicit GEMM:
    #   rows = output pixels (n, oh, ow), cols = output channels,
    #   reduction = (kh, kw, c) with the weight stored as [3, 3, C, CO].
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    P = NB * H * W
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    ow = offs_m % W
    t = offs_m // W
    oh = t % H
    nb = t // H
    m_ok = offs_m < P
    n_ok = offs_n < CO

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_steps = C // BLOCK_K
    for it in range(0, 9 * k_steps):
        tap = it // k_steps
        c0 = (it - tap * k_steps) * BLOCK_K
        kh = tap // 3
        kw = tap - kh * 3
        ih = oh + kh - 1
        iw = ow + kw - 1
        ok = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        row = ((nb * H + ih) * W + iw) * C + c0
        a = tl.load(x_ptr + row[:, None] + offs_k[None, :], mask=ok[:, None], other=0.0)
        b = tl.load(w_ptr + (tap * C + c0 + offs_k)[:, None] * CO + offs_n[None, :],
                    mask=n_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)

    bias = tl.load(b_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * CO + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


_CONFIG = dict(BLOCK_M=256, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=1)


def entry(x, weight, bias):
    # x: [N, H, W, C] (channels last), weight: [3, 3, C, CO], bias: [CO]
    NB, H, W, C = x.shape
    CO = weight.shape[-1]
    assert C % _CONFIG["BLOCK_K"] == 0
    y = torch.empty((NB, H, W, CO), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(NB * H * W, _CONFIG["BLOCK_M"]), triton.cdiv(CO, _CONFIG["BLOCK_N"]))
    _conv3x3_nhwc_kernel[grid](x, weight, bias, y, NB, H, W, C, CO, **_CONFIG)
    return y


def reference(x, weight, bias):
    out = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2).float(), weight.permute(3, 2, 0, 1).float(),
                                     bias.float(), stride=1, padding=1)
    return out.permute(0, 2, 3, 1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    NB, H, W, C, CO = case["N"], case["H"], case["W"], case["C"], case["CO"]
    x = torch.randn(NB, H, W, C, generator=g).to(torch.float16)
    weight = (torch.randn(3, 3, C, CO, generator=g) * (9 * C) ** -0.5).to(torch.float16)
    bias = (0.1 * torch.randn(CO, generator=g)).to(torch.float16)
    return (x.to(device), weight.to(device), bias.to(device))


CASES = [
    {"N": 16, "H": 56, "W": 56, "C": 256, "CO": 256},
    {"N": 32, "H": 28, "W": 28, "C": 512, "CO": 512},
    {"N": 8, "H": 100, "W": 76, "C": 192, "CO": 384},
    {"N": 4, "H": 96, "W": 160, "C": 128, "CO": 256},
    {"N": 64, "H": 14, "W": 14, "C": 1024, "CO": 512},
    {"N": 2, "H": 128, "W": 200, "C": 320, "CO": 320},
]
SMALL_CASES = [
    {"N": 1, "H": 5, "W": 7, "C": 64, "CO": 40},
    {"N": 2, "H": 3, "W": 4, "C": 128, "CO": 136},
]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    NB, H, W, C, CO = case["N"], case["H"], case["W"], case["C"], case["CO"]
    return 2 * (NB * H * W * C + 9 * C * CO + CO + NB * H * W * CO)


def flops(case):
    NB, H, W, C, CO = case["N"], case["H"], case["W"], case["C"], case["CO"]
    return 2 * NB * H * W * CO * 9 * C


DTYPE_FLOPS = "fp16"
