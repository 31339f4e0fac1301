"""liger-kernel SwiGLU forward: silu(a) * b, one program per row of the MLP's intermediate activations."""

import torch

from liger_kernel.ops.swiglu import swiglu_forward  # kopt: inline


def entry(a, b):
    return swiglu_forward(a, b)[2]


def reference(a, b):
    return (torch.nn.functional.silu(a.float()) * b.float()).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return tuple(_randn(g, case["rows"], case["dim"], device=device, dtype=dtype) for _ in range(2))


def _randn(g, *shape, device, dtype, scale=1.0, shift=0.0):
    return (shift + scale * torch.randn(*shape, device=device, generator=g)).to(dtype)


CASES = [{"rows": 4096, "dim": 11008}, {"rows": 8192, "dim": 14336}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5504}, {"rows": 16384, "dim": 1024}, {"rows": 4097, "dim": 18944}]
HELD_OUT = [{"rows": 3000, "dim": 13824}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 3, "dim": 100, "dtype": "float32"},
               {"rows": 5, "dim": 33, "dtype": "float32"}]


def bytes_moved(case):
    return 2 * 3 * case["rows"] * case["dim"]
