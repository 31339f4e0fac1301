import torch
import triton
import triton.language as tl


@triton.jit
def bn_silu_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, var_ptr, y_ptr,
                   C, HW, eps, BLOCK: tl.constexpr):
    # inference BatchNorm2d followed by SiLU on an NCHW tensor
    pid_hw = tl.program_id(0)
    plane = tl.program_id(1)
    c = plane % C
    offs = pid_hw * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = plane * HW
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    mu = tl.load(mean_ptr + c)
    var = tl.load(var_ptr + c)
    scale = w / tl.sqrt(var + eps)
    z = (x - mu) * scale + b
    y = z / (1.0 + tl.exp(-z))
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(x, weight, bias, running_mean, running_var):
    N, C, H, W = x.shape
    y = torch.empty_like(x)
    HW = H * W
    BLOCK = 1024
    grid = (triton.cdiv(HW, BLOCK), N * C)
    bn_silu_kernel[grid](x, weight, bias, running_mean, running_var, y,
                         C, HW, 1e-5, BLOCK=BLOCK, num_warps=4)
    return y


def reference(x, weight, bias, running_mean, running_var):
    z = torch.nn.functional.batch_norm(x.float(), running_mean, running_var, weight, bias,
                                       training=False, eps=1e-5)
    return torch.nn.functional.silu(z).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W = case["n"], case["c"], case["h"], case["w"]
    x = torch.randn(N, C, H, W, generator=g).to(torch.bfloat16)
    weight = 1.0 + 0.2 * torch.randn(C, generator=g)
    bias = 0.2 * torch.randn(C, generator=g)
    mean = 0.3 * torch.randn(C, generator=g)
    var = 0.5 + torch.rand(C, generator=g)
    return tuple(t.to(device) for t in (x, weight, bias, mean, var))


CASES = [
    {"n": 64, "c": 256, "h": 56, "w": 56},
    {"n": 128, "c": 512, "h": 28, "w": 28},
    {"n": 16, "c": 128, "h": 120, "w": 120},
    {"n": 32, "c": 96, "h": 100, "w": 100},
    {"n": 128, "c": 192, "h": 36, "w": 36},
    {"n": 16, "c": 64, "h": 200, "w": 200},
]
SMALL_CASES = [{"n": 2, "c": 6, "h": 12, "w": 12}, {"n": 1, "c": 5, "h": 20, "w": 12}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    e = case["n"] * case["c"] * case["h"] * case["w"]
    return 2 * 2 * e + 4 * 4 * case["c"]


def flops(case):
    return 8 * case["n"] * case["c"] * case["h"] * case["w"]
