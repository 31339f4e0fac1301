"""fla's Triton matmul (grouped tile order, @triton.heuristics over @triton.autotune), bf16 in, bf16 out."""

import torch

from fla.ops.utils.matmul import matmul  # kopt: inline


def entry(a, b):
    return matmul(a, b)


def reference(a, b):
    return (a.float() @ b.float()).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    m, k, n = case["mkn"]
    return (torch.randn(m, k, device=device, generator=g).to(dtype),
            torch.randn(k, n, device=device, generator=g).to(dtype) / k ** 0.5)


CASES = [{"mkn": [4096, 4096, 4096]}, {"mkn": [8192, 2048, 4096]}, {"mkn": [1000, 4096, 11008]},
         {"mkn": [16384, 128, 128]}, {"mkn": [2048, 8192, 1024]}, {"mkn": [4097, 3584, 3584]}]
HELD_OUT = [{"mkn": [3000, 5120, 5120]}]
SMALL_CASES = [{"mkn": [33, 64, 40], "dtype": "float32"}, {"mkn": [16, 32, 16], "dtype": "float32"}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float32": (1e-4, 1e-4)}
DTYPE_FLOPS = "bf16"


def flops(case):
    m, k, n = case["mkn"]
    return 2 * m * k * n


def bytes_moved(case):
    m, k, n = case["mkn"]
    return 2 * (m * k + k * n + m * n)
