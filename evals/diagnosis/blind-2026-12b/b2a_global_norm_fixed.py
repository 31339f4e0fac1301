"""Global L2 norm of a large bf16 gradient vector (fp32 result); fixed: a grid of programs each reduce a strided share into a partial, and a tiny second kernel sums the partials."""
import torch
import triton
import triton.language as tl


@triton.jit
def l2norm_partial_kernel(x_ptr, part_ptr, n, P, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, P * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        acc += x * x
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def l2norm_finish_kernel(part_ptr, out_ptr, P, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    p = tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(p, axis=0)))


def entry(x):
    n = x.numel()
    BLOCK = 4096
    P = max(1, min(1056, triton.cdiv(n, BLOCK)))
    part = torch.empty(P, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    l2norm_partial_kernel[(P,)](x, part, n, P, BLOCK=BLOCK, num_warps=8)
    l2norm_finish_kernel[(1,)](part, out, P, BLOCK_P=triton.next_power_of_2(P))
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
