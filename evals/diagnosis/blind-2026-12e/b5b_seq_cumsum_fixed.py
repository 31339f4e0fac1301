import torch, triton, triton.language as tl


@triton.jit
def seq_cumsum_kernel(x_ptr, out_ptr, L, D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    # one program per (batch, channel block): running sum over the sequence axis
    b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    base = b * L * D
    carry = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for start in range(0, L, BLOCK_L):
        offs_l = start + tl.arange(0, BLOCK_L)
        mask = (offs_l[:, None] < L) & mask_d[None, :]
        ptrs = base + offs_l[:, None] * D + offs_d[None, :]
        x = tl.load(x_ptr + ptrs, mask=mask, other=0.0).to(tl.float32)
        run = tl.cumsum(x, axis=0) + carry[None, :]
        tl.store(out_ptr + ptrs, run, mask=mask)
        carry += tl.sum(x, axis=0)


def entry(x):
    B, L, D = x.shape
    out = torch.empty((B, L, D), device=x.device, dtype=torch.float32)
    BLOCK_D = 64
    seq_cumsum_kernel[(B, triton.cdiv(D, BLOCK_D))](x, out, L, D, BLOCK_L=32, BLOCK_D=BLOCK_D, num_warps=4)
    return out


def reference(x):
    return torch.cumsum(x.float(), dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["B"], case["L"], case["D"], generator=g).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"B": 4, "L": 4096, "D": 4096},
    {"B": 8, "L": 2048, "D": 2560},
    {"B": 2, "L": 8192, "D": 3072},
    {"B": 16, "L": 1024, "D": 1536},
    {"B": 3, "L": 3000, "D": 5120},
]
SMALL_CASES = [{"B": 2, "L": 300, "D": 24}, {"B": 1, "L": 77, "D": 40}]
TOLERANCES = {"float32": (2e-3, 1e-4)}


def bytes_moved(case):
    n = case["B"] * case["L"] * case["D"]
    return n * 2 + n * 4


def flops(case):
    return case["B"] * case["L"] * case["D"]
