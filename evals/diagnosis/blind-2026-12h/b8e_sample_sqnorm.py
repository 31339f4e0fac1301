import torch, triton, triton.language as tl


@triton.jit
def sample_sqnorm_kernel(g_ptr, out_ptr, D, stride_b, BLOCK: tl.constexpr):
    # out[b] = sum_d g[b, d]^2
    b = tl.program_id(0)
    base = g_ptr + b.to(tl.int64) * stride_b
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK):
        cols = d0 + offs
        v = tl.load(base + cols, mask=cols < D, other=0.0)
        acc += v * v
    tl.store(out_ptr + b, tl.sum(acc, axis=0))


def entry(grads):
    B, D = grads.shape
    out = torch.empty(B, device=grads.device, dtype=torch.float32)
    sample_sqnorm_kernel[(B,)](grads, out, D, grads.stride(0), BLOCK=4096, num_warps=8)
    return out


def reference(grads):
    return grads.double().pow(2).sum(dim=1).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["B"], case["D"], generator=g)
    return (x.to(device),)


CASES = [
    {"B": 8, "D": 4194304},
    {"B": 16, "D": 3000000},
    {"B": 32, "D": 1048576},
    {"B": 5, "D": 10000000},
    {"B": 48, "D": 777776},
    {"B": 64, "D": 524288},
]
SMALL_CASES = [{"B": 4, "D": 1000}, {"B": 3, "D": 9001}, {"B": 2, "D": 40000}]
TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return case["B"] * case["D"] * 4 + case["B"] * 4


def flops(case):
    return 2 * case["B"] * case["D"]
