import torch
import triton
import triton.language as tl


@triton.jit
def head_rmsnorm_kernel(x_ptr, w_ptr, y_ptr, H, D, stride_xt, stride_xh, stride_yt, stride_yh, eps,
                        BLOCK_D: tl.constexpr):
    # y[t, h, :] = x[t, h, :] * rsqrt(mean(x[t, h, :]^2) + eps) * w
    t = tl.program_id(0)
    h = tl.program_id(1)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + t * stride_xt + h * stride_xh + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + t * stride_yt + h * stride_yh + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _head_rmsnorm(x, w, eps):
    T, H, D = x.shape
    y = torch.empty_like(x)
    head_rmsnorm_kernel[(T, H)](x, w, y, H, D, x.stride(0), x.stride(1), y.stride(0), y.stride(1), eps,
                                BLOCK_D=triton.next_power_of_2(D))
    return y


def entry(q, k, q_weight, k_weight):
    # per-head RMSNorm on queries [T, Hq, D] and keys [T, Hkv, D] (QK-norm)
    eps = 1e-6
    return _head_rmsnorm(q, q_weight, eps), _head_rmsnorm(k, k_weight, eps)


def _ref(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def reference(q, k, q_weight, k_weight):
    eps = 1e-6
    return _ref(q, q_weight, eps), _ref(k, k_weight, eps)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, Hq, Hkv, D = case["T"], case["Hq"], case["Hkv"], case["D"]
    q = torch.randn(T, Hq, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    k = torch.randn(T, Hkv, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    qw = (1.0 + 0.1 * torch.randn(D, generator=g, dtype=torch.float32)).to(torch.bfloat16)
    kw = (1.0 + 0.1 * torch.randn(D, generator=g, dtype=torch.float32)).to(torch.bfloat16)
    return (q.to(device), k.to(device), qw.to(device), kw.to(device))


CASES = [
    {"T": 8192, "Hq": 32, "Hkv": 8, "D": 128},
    {"T": 4000, "Hq": 40, "Hkv": 8, "D": 128},
    {"T": 16384, "Hq": 16, "Hkv": 4, "D": 128},
    {"T": 3000, "Hq": 64, "Hkv": 8, "D": 128},
    {"T": 12000, "Hq": 28, "Hkv": 4, "D": 128},
    {"T": 10000, "Hq": 48, "Hkv": 8, "D": 64},
]
SMALL_CASES = [
    {"T": 5, "Hq": 4, "Hkv": 2, "D": 64},
    {"T": 3, "Hq": 6, "Hkv": 3, "D": 128},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, Hq, Hkv, D = case["T"], case["Hq"], case["Hkv"], case["D"]
    return 2 * T * (Hq + Hkv) * D * 2 + 2 * D * 2


def flops(case):
    T, Hq, Hkv, D = case["T"], case["Hq"], case["Hkv"], case["D"]
    return 4 * T * (Hq + Hkv) * D
