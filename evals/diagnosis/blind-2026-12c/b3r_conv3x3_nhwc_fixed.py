import torch, triton, triton.language as tl


@triton.jit
def conv3x3_nhwc_kernel(
    x_ptr, w_ptr, bias_ptr, out_ptr,
    NB, H, W, C, COUT,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # 3x3 convolution, stride 1, padding 1, as an implicit GEMM:
    # out[m, co] = sum_{kh, kw, ci} x[n, oh + kh - 1, ow + kw - 1, ci] * w[kh, kw, ci, co]
    pid = tl.program_id(0)
    M = NB * H * W
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(COUT, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < COUT

    ow = offs_m % W
    oh = (offs_m // W) % H
    nb = offs_m // (W * H)
    row_base = ((nb * H + oh) * W + ow) * C

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    num_k = 9 * C
    for kk in range(0, num_k, BLOCK_K):
        r = kk // C
        c0 = kk - r * C
        dh = r // 3 - 1
        dw = r % 3 - 1
        ih = oh + dh
        iw = ow + dw
        valid = mask_m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a_ptrs = x_ptr + (row_base + (dh * W + dw) * C + c0)[:, None] + offs_k[None, :]
        a = tl.load(a_ptrs, mask=valid[:, None], other=0.0)
        w_ptrs = w_ptr + (kk + offs_k)[:, None] * COUT + offs_n[None, :]
        b = tl.load(w_ptrs, mask=mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)

    bias = tl.load(bias_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    out_ptrs = out_ptr + offs_m[:, None] * COUT + offs_n[None, :]
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def entry(x, weight, bias):
    # x: [NB, H, W, C] (channels-last), weight: [3, 3, C, COUT], bias: [COUT]
    NB, H, W, C = x.shape
    COUT = weight.shape[3]
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64
    assert C % BLOCK_K == 0
    x = x.contiguous()
    weight = weight.contiguous()
    out = torch.empty((NB, H, W, COUT), device=x.device, dtype=x.dtype)
    M = NB * H * W
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(COUT, BLOCK_N),)
    conv3x3_nhwc_kernel[grid](
        x, weight, bias, out, NB, H, W, C, COUT,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return out


def reference(x, weight, bias):
    xn = x.permute(0, 3, 1, 2).float()
    wn = weight.permute(3, 2, 0, 1).float()
    y = torch.nn.functional.conv2d(xn, wn, bias.float(), stride=1, padding=1)
    return y.permute(0, 2, 3, 1).contiguous().to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    NB, H, W, C, COUT = case["NB"], case["H"], case["W"], case["C"], case["COUT"]
    x = torch.randn((NB, H, W, C), generator=g, dtype=torch.float32)
    w = torch.randn((3, 3, C, COUT), generator=g, dtype=torch.float32) / ((9 * C) ** 0.5)
    b = torch.randn((COUT,), generator=g, dtype=torch.float32) * 0.1
    return (x.to(torch.float16).to(device), w.to(torch.float16).to(device), b.to(torch.float16).to(device))


CASES = [
    {"NB": 32, "H": 56, "W": 56, "C": 128, "COUT": 256},
    {"NB": 16, "H": 28, "W": 28, "C": 256, "COUT": 256},
    {"NB": 8, "H": 60, "W": 60, "C": 192, "COUT": 384},
    {"NB": 64, "H": 14, "W": 14, "C": 512, "COUT": 512},
    {"NB": 4, "H": 90, "W": 90, "C": 128, "COUT": 512},
    {"NB": 12, "H": 38, "W": 50, "C": 320, "COUT": 384},
]
SMALL_CASES = [{"NB": 1, "H": 6, "W": 7, "C": 64, "COUT": 48}, {"NB": 2, "H": 5, "W": 5, "C": 128, "COUT": 136}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    NB, H, W, C, COUT = case["NB"], case["H"], case["W"], case["C"], case["COUT"]
    return 2 * (NB * H * W * C + 9 * C * COUT + COUT + NB * H * W * COUT)


def flops(case):
    NB, H, W, C, COUT = case["NB"], case["H"], case["W"], case["C"], case["COUT"]
    return 2 * NB * H * W * COUT * 9 * C


DTYPE_FLOPS = "fp16"
