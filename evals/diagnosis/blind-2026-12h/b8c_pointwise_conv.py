import torch, triton, triton.language as tl


@triton.jit
def conv1x1_nhwc_kernel(x_ptr, w_ptr, b_ptr, y_ptr, P, C_IN, C_OUT,
                        stride_xp, stride_wo, stride_yp,
                        BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr):
    # channels-last 1x1 convolution: y[p, co] = relu(sum_ci x[p, ci] * w[co, ci] + b[co])
    pid_p = tl.program_id(0)
    pid_co = tl.program_id(1)
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_ci = tl.arange(0, BLOCK_CI)
    x_ptrs = x_ptr + offs_p[:, None] * stride_xp + offs_ci[None, :]
    w_ptrs = w_ptr + offs_co[:, None] * stride_wo + offs_ci[None, :]

    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for c0 in range(0, C_IN, BLOCK_CI):
        ci_ok = offs_ci < C_IN - c0
        x = tl.load(x_ptrs, mask=(offs_p[:, None] < P) & ci_ok[None, :], other=0.0).to(tl.float32)
        w = tl.load(w_ptrs, mask=(offs_co[:, None] < C_OUT) & ci_ok[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
        x_ptrs += BLOCK_CI
        w_ptrs += BLOCK_CI

    bias = tl.load(b_ptr + offs_co, mask=offs_co < C_OUT, other=0.0).to(tl.float32)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    y_ptrs = y_ptr + offs_p[:, None] * stride_yp + offs_co[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty),
             mask=(offs_p[:, None] < P) & (offs_co[None, :] < C_OUT))


def entry(x, weight, bias):
    # x: [N, H, W, C_IN] channels-last, weight: [C_OUT, C_IN, 1, 1]
    N, H, W, C_IN = x.shape
    C_OUT = weight.shape[0]
    P = N * H * W
    x2 = x.reshape(P, C_IN)
    w2 = weight.reshape(C_OUT, C_IN)
    y = torch.empty((N, H, W, C_OUT), device=x.device, dtype=x.dtype)
    y2 = y.view(P, C_OUT)
    BLOCK_P, BLOCK_CO, BLOCK_CI = 64, 64, 16
    grid = (triton.cdiv(P, BLOCK_P), triton.cdiv(C_OUT, BLOCK_CO))
    conv1x1_nhwc_kernel[grid](
        x2, w2, bias, y2, P, C_IN, C_OUT,
        x2.stride(0), w2.stride(0), y2.stride(0),
        BLOCK_P=BLOCK_P, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI, num_warps=8, num_stages=3)
    return y


def reference(x, weight, bias):
    y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2).float(), weight.float(), bias.float())
    return torch.relu(y).permute(0, 2, 3, 1).contiguous().to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, CI, CO, H, W = case["N"], case["C_IN"], case["C_OUT"], case["H"], case["W"]
    x = torch.randn(N, H, W, CI, generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(CO, CI, 1, 1, generator=g, dtype=torch.float32) / (CI ** 0.5)).to(torch.float16)
    b = (torch.randn(CO, generator=g, dtype=torch.float32) * 0.1).to(torch.float16)
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"N": 64, "C_IN": 256, "C_OUT": 64, "H": 56, "W": 56},
    {"N": 64, "C_IN": 64, "C_OUT": 256, "H": 56, "W": 56},
    {"N": 128, "C_IN": 512, "C_OUT": 128, "H": 28, "W": 28},
    {"N": 128, "C_IN": 1024, "C_OUT": 256, "H": 14, "W": 14},
    {"N": 256, "C_IN": 2048, "C_OUT": 512, "H": 7, "W": 7},
    {"N": 256, "C_IN": 672, "C_OUT": 112, "H": 14, "W": 14},
]
SMALL_CASES = [{"N": 2, "C_IN": 40, "C_OUT": 24, "H": 7, "W": 9}, {"N": 1, "C_IN": 64, "C_OUT": 70, "H": 10, "W": 10}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    N, CI, CO, HW = case["N"], case["C_IN"], case["C_OUT"], case["H"] * case["W"]
    return 2 * (N * CI * HW + CO * CI + CO + N * CO * HW)


def flops(case):
    N, CI, CO, HW = case["N"], case["C_IN"], case["C_OUT"], case["H"] * case["W"]
    return 2 * N * CO * CI * HW


DTYPE_FLOPS = "fp16"
