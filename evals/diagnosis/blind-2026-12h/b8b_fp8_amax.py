import torch, triton, triton.language as tl

# Absolute maximum of a tensor, used to derive the per-tensor FP8 scaling
# factor of an activation or weight.


@triton.jit
def _amax_kernel(x_ptr, amax_ptr, N, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
        acc = tl.maximum(acc, tl.abs(x.to(tl.float32)))
    tl.store(amax_ptr, tl.max(acc, axis=0))


def entry(x):
    N = x.numel()
    amax = torch.empty(1, device=x.device, dtype=torch.float32)
    _amax_kernel[(1,)](x, amax, N, BLOCK=4096, num_warps=8)
    return amax


def reference(x):
    return x.float().abs().amax().reshape(1)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = (torch.randn(case["N"], generator=g, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"N": 1 << 26},
    {"N": 50_000_000},
    {"N": 8192 * 7168},
    {"N": 67_108_879},
    {"N": 100_000_003},
    {"N": 75_000_000},
]
SMALL_CASES = [{"N": 5000}, {"N": 12289}]
TOLERANCES = {"float32": (0.0, 0.0)}


def bytes_moved(case):
    return case["N"] * 2 + 4


def flops(case):
    return 2 * case["N"]
