"""liger-kernel LayerNorm forward: one program per row, mean and rstd kept for the backward."""

import torch

from liger_kernel.ops.layer_norm import layer_norm_forward  # kopt: inline


def entry(x, w, b):
    y, _, mean, rstd, *_ = layer_norm_forward(x, w, b, 1e-5)
    return y


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return (_randn(g, case["rows"], case["dim"], device=device, dtype=dtype),
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
    return 2 * (2 * case["rows"] * case["dim"] + 2 * case["dim"] + 2 * case["rows"])
