"""liger-kernel DyT (dynamic tanh, the norm-free transformer's LayerNorm replacement) forward: 2-D grid of row tiles."""

import torch

from liger_kernel.ops.dyt import liger_dyt_fwd  # kopt: inline


def entry(x, alpha, gamma, beta):
    return liger_dyt_fwd(x, alpha, gamma, beta)


def reference(x, alpha, gamma, beta):
    return (gamma.float() * torch.tanh(alpha.float() * x.float()) + beta.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return (_randn(g, case["rows"], case["dim"], device=device, dtype=dtype),
            _randn(g, 1, device=device, dtype=dtype, scale=0.1, shift=0.5),
            _randn(g, case["dim"], device=device, dtype=dtype, scale=0.1, shift=1.0),
            _randn(g, case["dim"], device=device, dtype=dtype, scale=0.1))


def _randn(g, *shape, device, dtype, scale=1.0, shift=0.0):
    return (shift + scale * torch.randn(*shape, device=device, generator=g)).to(dtype)


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 8192, "dim": 2048}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5120}, {"rows": 16384, "dim": 128}, {"rows": 4097, "dim": 3584}]
HELD_OUT = [{"rows": 3000, "dim": 7168}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 3, "dim": 100, "dtype": "float32"},
               {"rows": 5, "dim": 33, "dtype": "float32"}]


def bytes_moved(case):
    return 2 * 2 * case["rows"] * case["dim"]
