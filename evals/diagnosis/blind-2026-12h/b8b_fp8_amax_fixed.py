import torch, triton, triton.language as tl

# Absolute maximum of a tensor, used to derive the per-tensor FP8 scaling
# factor of an activation or weight.


@triton.jit
def _amax_kernel(x_ptr, amax_ptr, N, BLOCK: tl.constexpr, BLOCKS_PER_PROG: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(BLOCKS_PER_PROG):
        offs = (pid * BLOCKS_PER_PROG + i) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
        acc = tl.maximum(acc, tl.abs(x.to(tl.float32)))
    tl.atomic_max(amax_ptr, tl.max(acc, axis=0))


def entry(x):
    N = x.numel()
    amax = torch.zeros(1, device=x.device, dtype=torch.float32)
    BLOCK, BLOCKS_PER_PROG = 4096, 4
    grid = (triton.cdiv(N, BLOCK * BLOCKS_PER_PROG),)
    _amax_kernel[grid](x, amax, N, BLOCK=BLOCK, BLOCKS_PER_PROG=BLOCKS_PER_PROG, num_warps=8)
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
