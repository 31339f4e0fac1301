"""A modulo in the offsets (a periodic broadcast, e.g. a bias of length m over rows): the adapter
cannot prove the addresses contiguous, so the load becomes a scalar loop with a remsi per element."""

import torch
import triton
import triton.language as tl


@triton.jit
def tile_bias_kernel(x_ptr, bias_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % m, mask=mask)
    tl.store(out_ptr + offs, x + b, mask=mask)


def entry(x, bias):
    out = torch.empty_like(x)
    tile_bias_kernel[(triton.cdiv(x.numel(), 1024),)](x, bias, out, x.numel(), bias.numel(), BLOCK=1024)
    return out


def reference(x, bias):
    return (x.view(-1, bias.numel()) + bias).view(-1)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["rows"] * case["m"], generator=g).to(device)
    bias = torch.randn(case["m"], generator=g).to(device)
    return x, bias


CASES = [{"rows": 4096, "m": 768}, {"rows": 1000, "m": 1023}, {"rows": 64, "m": 4096}, {"rows": 7, "m": 333},
         {"rows": 2048, "m": 512}]
SMALL_CASES = [{"rows": 8, "m": 96}]
