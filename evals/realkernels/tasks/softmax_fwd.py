"""liger-kernel softmax forward: a single-block kernel for rows that fit, a two-pass multi-block one otherwise."""

import torch

from liger_kernel.ops.softmax import _softmax_forward  # kopt: inline


def entry(x):
    return _softmax_forward(x)[0]


def reference(x):
    return torch.softmax(x.float(), -1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return (_randn(g, case["rows"], case["dim"], device=device, dtype=dtype, scale=2.0),)


def _randn(g, *shape, device, dtype, scale=1.0, shift=0.0):
    return (shift + scale * torch.randn(*shape, device=device, generator=g)).to(dtype)


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 8192, "dim": 2048}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5120}, {"rows": 16384, "dim": 128}, {"rows": 4097, "dim": 3584}]
HELD_OUT = [{"rows": 3000, "dim": 7168}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 3, "dim": 100, "dtype": "float32"},
               {"rows": 5, "dim": 33, "dtype": "float32"}]


def bytes_moved(case):
    return 2 * 2 * case["rows"] * case["dim"]
