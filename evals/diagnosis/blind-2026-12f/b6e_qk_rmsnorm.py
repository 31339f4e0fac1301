import torch
import triton
import triton.language as tl


# Per-head RMSNorm ("QK-norm") applied to query or key activations of shape
# [tokens, heads, head_dim] before attention, with a learned [head_dim] scale.
@triton.jit
def _head_rmsnorm_kernel(x_ptr, w_ptr, out_ptr, D, eps, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)              # one (token, head) vector
    cols = tl.arange(0, BLOCK_D)
    m = cols < D
    x = tl.load(x_ptr + row * D + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / D
    y = x * tl.rsqrt(ms + eps) * w
    tl.store(out_ptr + row * D + cols, y.to(out_ptr.dtype.element_ty), mask=m)


def entry(x, weight, eps):
    T, H, D = x.shape
    out = torch.empty_like(x)
    _head_rmsnorm_kernel[(T * H,)](x, weight, out, D, float(eps),
                                   BLOCK_D=triton.next_power_of_2(D))
    return out


def reference(x, weight, eps):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
    return y.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    x = torch.randn((T, H, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    w = (1.0 + 0.1 * torch.randn((D,), generator=g, dtype=torch.float32)).to(torch.bfloat16)
    return x.to(device), w.to(device), 1e-6


CASES = [
    {"T": 16384, "H": 32, "D": 128},
    {"T": 8192, "H": 40, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 12000, "H": 64, "D": 64},
    {"T": 20000, "H": 28, "D": 128},
    {"T": 40000, "H": 16, "D": 64},
]

SMALL_CASES = [
    {"T": 6, "H": 5, "D": 128},
    {"T": 9, "H": 3, "D": 64},
]

TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * T * H * D * 2 + D * 2


def flops(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 4 * T * H * D
