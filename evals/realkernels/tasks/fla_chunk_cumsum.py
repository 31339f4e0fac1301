"""fla's chunk-local cumulative sum of log-gates (the scan inside every chunked gated linear attention):
[B, T, H] gates, a prefix sum within each chunk of 64 steps, fp32 out."""

import torch

from fla.ops.utils.cumsum import chunk_local_cumsum  # kopt: inline


def entry(g):
    return chunk_local_cumsum(g, 64)


def reference(g):
    b, t, h = g.shape
    pad = (-t) % 64
    x = torch.nn.functional.pad(g.float(), (0, 0, 0, pad)).view(b, -1, 64, h)
    return x.cumsum(2).view(b, t + pad, h)[:, :t]


def make_inputs(case, device, seed):
    gen = torch.Generator(device=device).manual_seed(seed)
    shape = (case["batch"], case["seq"], case["heads"])
    return (torch.nn.functional.logsigmoid(torch.randn(*shape, device=device, generator=gen)),)


CASES = [{"batch": 8, "seq": 4096, "heads": 16}, {"batch": 1, "seq": 32768, "heads": 32},
         {"batch": 32, "seq": 2048, "heads": 8}, {"batch": 4, "seq": 1000, "heads": 16},
         {"batch": 2, "seq": 16385, "heads": 4}]
HELD_OUT = [{"batch": 3, "seq": 3000, "heads": 12}]
SMALL_CASES = [{"batch": 1, "seq": 70, "heads": 2}, {"batch": 2, "seq": 64, "heads": 1}]
TOLERANCES = {"float32": (1e-4, 1e-5)}


def bytes_moved(case):
    return 2 * 4 * case["batch"] * case["seq"] * case["heads"]
