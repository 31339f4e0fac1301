"""Global L2 norm of a large bf16 gradient vector (fp32 result); planted: a single program walks the whole vector, so the reduction runs serially on one SM."""
import torch
import triton
import triton.language as tl


@triton.jit
def l2norm_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        acc += x * x
    tl.store(out_ptr, tl.sqrt(tl.sum(acc, axis=0)))


def entry(x):
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    l2norm_kernel[(1,)](x, out, x.numel(), BLOCK=4096, num_warps=8)
    return out


def reference(x):
    return torch.linalg.vector_norm(x.float()).reshape(1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(case["n"], generator=g).to(torch.bfloat16).to(device),)


CASES = [{"n": 50_000_000}, {"n": 1 << 26}, {"n": 100_000_007}, {"n": 80_000_003}, {"n": 1 << 27}]
SMALL_CASES = [{"n": 10000}, {"n": 4097}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return 2 * case["n"] + 4


def flops(case):
    return 2 * case["n"]
