"""liger-kernel LayerNorm backward: dX per row, dW and dB accumulated with atomics across every row."""

import torch

from liger_kernel.ops.layer_norm import layer_norm_backward  # kopt: inline


def entry(dy, x, w, b, mean, rstd):
    return layer_norm_backward(dy, x, w, b, mean, rstd)


def reference(dy, x, w, b, mean, rstd):
    xf, dyf = x.float(), dy.float()
    xhat = (xf - mean.float()[:, None]) * rstd.float()[:, None]
    dxhat = dyf * w.float()
    dx = rstd.float()[:, None] * (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dyf * xhat).sum(0).to(w.dtype), dyf.sum(0).to(w.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    x = _randn(g, case["rows"], case["dim"], device=device, dtype=dtype)
    mean = x.float().mean(-1)
    rstd = torch.rsqrt(x.float().var(-1, unbiased=False) + 1e-5)
    return (_randn(g, case["rows"], case["dim"], device=device, dtype=dtype), x,
            _randn(g, case["dim"], device=device, dtype=dtype, scale=0.1, shift=1.0),
            _randn(g, case["dim"], device=device, dtype=dtype, scale=0.1), mean.to(dtype), rstd.to(dtype))


def _randn(g, *shape, device, dtype, scale=1.0, shift=0.0):
    return (shift + scale * torch.randn(*shape, device=device, generator=g)).to(dtype)


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 8192, "dim": 2048}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5120}, {"rows": 16384, "dim": 128}, {"rows": 4097, "dim": 3584}]
HELD_OUT = [{"rows": 3000, "dim": 7168}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 3, "dim": 100, "dtype": "float32"},
               {"rows": 5, "dim": 33, "dtype": "float32"}]
TOLERANCES = {"bfloat16": (1e-1, 3e-2), "float32": (1e-4, 1e-4)}  # dW, dB: atomics over thousands of rows


def bytes_moved(case):
    return 2 * 3 * case["rows"] * case["dim"] + 4 * case["rows"]
