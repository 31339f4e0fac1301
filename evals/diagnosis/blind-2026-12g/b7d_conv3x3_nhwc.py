import torch
import triton
import triton.language as tl


@triton.jit
def _conv2d_nhwc_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    BATCH, H, W, C, COUT,
    KH: tl.constexpr, KW: tl.constexpr, PAD: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # implicit-GEMM 2D convolution, stride 1, "same" padding
    # x: [BATCH, H, W, C], w: [KH, KW, C, COUT], y: [BATCH, H, W, COUT]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    P = BATCH * H * W
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < P
    n_mask = offs_n < COUT
    ow = offs_m % W
    oh = (offs_m // W) % H
    ob = offs_m // (W * H)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kh in range(KH):
        for kw in range(KW):
            ih = oh + kh - PAD
            iw = ow + kw - PAD
            valid = m_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_row = ((ob * H + ih) * W + iw) * C
            w_row = (kh * KW + kw) * C
            for c0 in range(0, C, BLOCK_K):
                cc = c0 + offs_k
                a = tl.load(x_ptr + x_row[:, None] + cc[None, :],
                            mask=valid[:, None] & (cc[None, :] < C), other=0.0)
                b = tl.load(w_ptr + (w_row + cc)[:, None] * COUT + offs_n[None, :],
                            mask=(cc[:, None] < C) & n_mask[None, :], other=0.0)
                acc = tl.dot(a, b, acc)

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    out = acc + bias[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * COUT + offs_n[None, :]
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def entry(x, w, bias):
    BATCH, H, W, C = x.shape
    KH, KW, _, COUT = w.shape
    y = torch.empty((BATCH, H, W, COUT), device=x.device, dtype=x.dtype)
    BLOCK_M = 128
    BLOCK_N = 64 if COUT <= 64 else 128
    BLOCK_K = 64 if C % 64 == 0 else 32
    grid = (triton.cdiv(BATCH * H * W, BLOCK_M), triton.cdiv(COUT, BLOCK_N))
    _conv2d_nhwc_kernel[grid](
        x, w, bias, y, BATCH, H, W, C, COUT,
        KH=KH, KW=KW, PAD=KH // 2,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8, num_stages=3,
    )
    return y


def reference(x, w, bias):
    xin = x.permute(0, 3, 1, 2).float()
    wt = w.permute(3, 2, 0, 1).float()
    y = torch.nn.functional.conv2d(xin, wt, bias.float(), padding=w.shape[0] // 2)
    return y.permute(0, 2, 3, 1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, H, W, C, CO = case["B"], case["H"], case["W"], case["C"], case["CO"]
    x = torch.randn((B, H, W, C), generator=g, dtype=torch.float32)
    w = torch.randn((3, 3, C, CO), generator=g, dtype=torch.float32) * (9 * C) ** -0.5
    b = torch.randn((CO,), generator=g, dtype=torch.float32) * 0.1
    return (x.to(torch.float16).to(device), w.to(torch.float16).to(device), b.to(torch.float16).to(device))


CASES = [
    {"B": 32, "H": 56, "W": 56, "C": 64, "CO": 128},
    {"B": 16, "H": 64, "W": 64, "C": 128, "CO": 128},
    {"B": 8, "H": 96, "W": 96, "C": 192, "CO": 192},
    {"B": 6, "H": 120, "W": 90, "C": 96, "CO": 160},
    {"B": 2, "H": 256, "W": 256, "C": 64, "CO": 64},
    {"B": 24, "H": 50, "W": 70, "C": 160, "CO": 256},
]
SMALL_CASES = [
    {"B": 2, "H": 6, "W": 7, "C": 64, "CO": 64},
    {"B": 1, "H": 5, "W": 9, "C": 96, "CO": 80},
]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    B, H, W, C, CO = case["B"], case["H"], case["W"], case["C"], case["CO"]
    return 2 * (B * H * W * C + 9 * C * CO + CO + B * H * W * CO)


def flops(case):
    B, H, W, C, CO = case["B"], case["H"], case["W"], case["C"], case["CO"]
    return 2 * B * H * W * CO * 9 * C


DTYPE_FLOPS = "fp16"
