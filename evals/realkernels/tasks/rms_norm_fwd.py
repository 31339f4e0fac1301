"""liger-kernel RMSNorm forward (Llama casting), the launcher LigerRMSNormFunction.forward calls."""

import torch

from liger_kernel.ops.rms_norm import rms_norm_forward  # kopt: inline


def entry(x, w):
    y, *_ = rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)
    return y


def reference(x, w):
    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return w * normed.to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return (_randn(g, case["rows"], case["dim"], device=device, dtype=dtype),
            _randn(g, case["dim"], device=device, dtype=dtype, scale=0.1, shift=1.0))


def _randn(g, *shape, device, dtype, scale=1.0, shift=0.0):
    return (shift + scale * torch.randn(*shape, device=device, generator=g)).to(dtype)


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 8192, "dim": 2048}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5120}, {"rows": 16384, "dim": 128}, {"rows": 4097, "dim": 3584}]
HELD_OUT = [{"rows": 3000, "dim": 7168}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 3, "dim": 100, "dtype": "float32"},
               {"rows": 5, "dim": 33, "dtype": "float32"}]


def bytes_moved(case):
    return 2 * (2 * case["rows"] * case["dim"] + case["dim"]) + 4 * case["rows"]
