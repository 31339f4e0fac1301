"""fla's LayerNorm forward (the norm of its models): autotuned, multi-row or row kernel by width."""

import torch

from fla.modules.norm.layernorm import layer_norm_fwd  # kopt: inline


def entry(x, w, b):
    return layer_norm_fwd(x, w, b, 1e-5)[0]


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    d = case["dim"]
    return (torch.randn(case["rows"], d, device=device, generator=g).to(dtype),
            (1 + 0.1 * torch.randn(d, device=device, generator=g)).to(dtype),
            (0.1 * torch.randn(d, device=device, generator=g)).to(dtype))


CASES = [{"rows": 4096, "dim": 4096}, {"rows": 8192, "dim": 2048}, {"rows": 2048, "dim": 8192},
         {"rows": 1000, "dim": 5120}, {"rows": 16384, "dim": 128}, {"rows": 4097, "dim": 3584}]
HELD_OUT = [{"rows": 3000, "dim": 7168}]
SMALL_CASES = [{"rows": 4, "dim": 64, "dtype": "float32"}, {"rows": 5, "dim": 33, "dtype": "float32"}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return 2 * 2 * case["rows"] * case["dim"]
