"""liger-kernel GroupNorm forward: one program per (sample, group), looping over the group's channels."""

import torch

from liger_kernel.ops.group_norm import group_norm_forward  # kopt: inline


def entry(x, w, b):
    return group_norm_forward(x, x.shape[1], GROUPS, w, b, 1e-6)[0]


def reference(x, w, b):
    return torch.nn.functional.group_norm(x.float(), GROUPS, w.float(), b.float(), 1e-6).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "float32"))
    c = case["channels"]
    return (torch.randn(case["batch"], c, case["hidden"], device=device, generator=g).to(dtype),
            (1 + 0.1 * torch.randn(c, device=device, generator=g)).to(dtype),
            (0.1 * torch.randn(c, device=device, generator=g)).to(dtype))


GROUPS = 8
CASES = [{"batch": 32, "channels": 256, "hidden": 4096}, {"batch": 8, "channels": 512, "hidden": 1024},
         {"batch": 64, "channels": 64, "hidden": 8192}, {"batch": 16, "channels": 128, "hidden": 1000},
         {"batch": 4, "channels": 1024, "hidden": 4097}]
HELD_OUT = [{"batch": 24, "channels": 320, "hidden": 2048}]
SMALL_CASES = [{"batch": 2, "channels": 16, "hidden": 8}, {"batch": 1, "channels": 8, "hidden": 33}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 2 * 4 * case["batch"] * case["channels"] * case["hidden"]
