"""liger-kernel cross entropy forward: the mean loss, and the gradient written into the logits in place
(the trick that saves a vocabulary-sized buffer). In-place output: MUTATED compares the logits after the call."""

import torch

from liger_kernel.ops.cross_entropy import cross_entropy_forward  # kopt: inline


def entry(logits, target):
    loss, _, _ = cross_entropy_forward(logits, target, None, -100, 0.0, 0.0, "mean", None, False)
    return loss


def reference(logits, target):
    x = logits.float()
    loss = torch.nn.functional.cross_entropy(x, target)
    grad = torch.softmax(x, -1)
    grad[torch.arange(len(target), device=x.device), target] -= 1
    logits.copy_(grad / len(target))
    return loss.to(logits.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    logits = (2 * torch.randn(case["rows"], case["vocab"], device=device, generator=g)).to(dtype)
    target = torch.randint(0, case["vocab"], (case["rows"],), device=device, generator=g)
    return logits, target


MUTATED = ["logits"]
CASES = [{"rows": 4096, "vocab": 32000}, {"rows": 2048, "vocab": 128256}, {"rows": 8192, "vocab": 32000},
         {"rows": 1000, "vocab": 151936}, {"rows": 4097, "vocab": 50257}]
HELD_OUT = [{"rows": 3000, "vocab": 65536}]
SMALL_CASES = [{"rows": 4, "vocab": 64, "dtype": "float32"}, {"rows": 3, "vocab": 100, "dtype": "float32"},
               {"rows": 5, "vocab": 33, "dtype": "float32"}]
TOLERANCES = {"bfloat16": (1e-2, 2e-2), "float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return 2 * 2 * case["rows"] * case["vocab"] + 8 * case["rows"]
