import torch
import triton
import triton.language as tl


@triton.jit
def conv1x1_nhwc_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C_in, C_out, P,
    BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr,
):
    # channels-last 1x1 convolution: y[n, p, co] = sum_ci x[n, p, ci] * w[co, ci] + b[co]
    pid_p = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)

    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_ci = tl.arange(0, BLOCK_CI)
    p_mask = offs_p < P
    co_mask = offs_co < C_out

    x_base = x_ptr + n.to(tl.int64) * P * C_in
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for c0 in range(0, C_in, BLOCK_CI):
        ci = c0 + offs_ci
        ci_mask = ci < C_in
        x = tl.load(x_base + offs_p[:, None] * C_in + ci[None, :],
                    mask=p_mask[:, None] & ci_mask[None, :], other=0.0)
        w = tl.load(w_ptr + offs_co[None, :] * C_in + ci[:, None],
                    mask=co_mask[None, :] & ci_mask[:, None], other=0.0)
        # [P, CI] @ [CI, CO]
        acc = tl.dot(x, w, acc)

    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0).to(tl.float32)
    acc += bias[None, :]
    y_base = y_ptr + n.to(tl.int64) * P * C_out
    y_ptrs = y_base + offs_p[:, None] * C_out + offs_co[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=p_mask[:, None] & co_mask[None, :])


def entry(x, weight, bias):
    # x: [N, H, W, C_in] channels-last activations, weight: [C_out, C_in]
    N, H, W, C_in = x.shape
    C_out = weight.shape[0]
    P = H * W
    y = torch.empty((N, H, W, C_out), device=x.device, dtype=x.dtype)
    BLOCK_P, BLOCK_CO, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(P, BLOCK_P), triton.cdiv(C_out, BLOCK_CO), N)
    conv1x1_nhwc_kernel[grid](
        x, weight, bias, y, C_in, C_out, P,
        BLOCK_P=BLOCK_P, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI,
        num_warps=4, num_stages=3,
    )
    return y


def reference(x, weight, bias):
    xc = x.permute(0, 3, 1, 2).float()
    y = torch.nn.functional.conv2d(xc, weight.float()[:, :, None, None], bias.float())
    return y.permute(0, 2, 3, 1).contiguous().to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C_in, C_out, H, W = case["N"], case["C_in"], case["C_out"], case["H"], case["W"]
    x = torch.randn(N, H, W, C_in, generator=g, dtype=torch.float32).to(torch.float16)
    weight = (torch.randn(C_out, C_in, generator=g, dtype=torch.float32) / (C_in ** 0.5)).to(torch.float16)
    bias = (torch.randn(C_out, generator=g, dtype=torch.float32) * 0.1).to(torch.float16)
    return x.to(device), weight.to(device), bias.to(device)


CASES = [
    {"N": 32, "C_in": 256, "C_out": 256, "H": 56, "W": 56},
    {"N": 32, "C_in": 512, "C_out": 512, "H": 28, "W": 28},
    {"N": 96, "C_in": 128, "C_out": 384, "H": 35, "W": 35},
    {"N": 128, "C_in": 1024, "C_out": 256, "H": 14, "W": 14},
    {"N": 48, "C_in": 96, "C_out": 576, "H": 40, "W": 40},
    {"N": 32, "C_in": 320, "C_out": 1280, "H": 30, "W": 30},
]
SMALL_CASES = [{"N": 2, "C_in": 24, "C_out": 40, "H": 7, "W": 9}, {"N": 1, "C_in": 32, "C_out": 16, "H": 10, "W": 10}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    N, C_in, C_out, P = case["N"], case["C_in"], case["C_out"], case["H"] * case["W"]
    return 2 * (N * P * C_in + C_out * C_in + C_out + N * P * C_out)


def flops(case):
    N, C_in, C_out, P = case["N"], case["C_in"], case["C_out"], case["H"] * case["W"]
    return 2 * N * P * C_out * C_in


DTYPE_FLOPS = "fp16"
