"""fla's row softmax forward (autotuned warps), fp32 probabilities from bf16 scores."""

import torch

from fla.ops.utils.softmax import softmax_fwd  # kopt: inline


def entry(x):
    return softmax_fwd(x)


def reference(x):
    return torch.softmax(x.float(), -1)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    return ((2 * torch.randn(case["rows"], case["dim"], device=device, generator=g)).to(dtype),)


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 32768, "dim": 512}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5000}, {"rows": 65536, "dim": 64}, {"rows": 4097, "dim": 2048}]
HELD_OUT = [{"rows": 3000, "dim": 3000}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 5, "dim": 33, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-6, 1e-4)}


def bytes_moved(case):
    return 6 * case["rows"] * case["dim"]
