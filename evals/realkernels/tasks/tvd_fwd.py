"""liger-kernel total variation distance forward: per-row loss and gradient (sign of p - q) in one pass."""

import torch

from liger_kernel.ops.tvd import tv_distance_forward_triton  # kopt: inline


def entry(p, q):
    return tv_distance_forward_triton(p, q, None, "batchmean", -100, False)


def reference(p, q):
    diff = p.float() - q.float()
    n = p.shape[0]
    return 0.5 * diff.abs().sum() / n, (0.5 * torch.sign(diff) / n).to(p.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "float32"))
    shape = (case["rows"], case["vocab"])
    return tuple(torch.softmax(torch.randn(*shape, device=device, generator=g), -1).to(dtype) for _ in range(2))


CASES = [{"rows": 4096, "vocab": 32000}, {"rows": 2048, "vocab": 128256}, {"rows": 8192, "vocab": 32000},
         {"rows": 1000, "vocab": 151936}, {"rows": 4097, "vocab": 50257}]
HELD_OUT = [{"rows": 3000, "vocab": 65536}]
SMALL_CASES = [{"rows": 4, "vocab": 64, "dtype": "float32"}, {"rows": 3, "vocab": 100, "dtype": "float32"},
               {"rows": 5, "vocab": 33, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return 3 * 4 * case["rows"] * case["vocab"]
