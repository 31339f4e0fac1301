import torch, triton, triton.language as tl


@triton.jit
def _linear_recurrence_kernel(a_ptr, x_ptr, h_ptr, T, D, stride_b, stride_t, BLOCK_D: tl.constexpr):
    # h[b, t, d] = a[b, t, d] * h[b, t - 1, d] + x[b, t, d],  h[b, -1, d] = 0
    b = tl.program_id(0)
    db = tl.program_id(1)
    offs_d = db * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    base = b.to(tl.int64) * stride_b + offs_d
    h = tl.zeros([BLOCK_D], dtype=tl.float32)
    for t in range(T):
        off = base + t * stride_t
        a = tl.load(a_ptr + off, mask=dmask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + off, mask=dmask, other=0.0).to(tl.float32)
        h = a * h + x
        tl.store(h_ptr + off, h, mask=dmask)


def entry(a, x):
    # a (decay gates), x (inputs): [B, T, D] bf16 -> hidden states h: [B, T, D] fp32
    B, T, D = x.shape
    a = a.contiguous()
    x = x.contiguous()
    h = torch.empty((B, T, D), device=x.device, dtype=torch.float32)
    BLOCK_D = 64
    _linear_recurrence_kernel[(B, triton.cdiv(D, BLOCK_D))](
        a, x, h, T, D, x.stride(0), x.stride(1), BLOCK_D=BLOCK_D, num_warps=2)
    return h


def reference(a, x):
    a = a.float()
    x = x.float()
    h = torch.empty_like(x)
    state = torch.zeros_like(x[:, 0])
    for t in range(x.shape[1]):
        state = a[:, t] * state + x[:, t]
        h[:, t] = state
    return h


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, T, D = case["B"], case["T"], case["D"]
    a = torch.sigmoid(torch.randn((B, T, D), generator=g, dtype=torch.float32) + 2.0).to(torch.bfloat16)
    x = torch.randn((B, T, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (a.to(device), x.to(device))


CASES = [
    {"B": 8, "T": 2048, "D": 4096},
    {"B": 4, "T": 4096, "D": 4096},
    {"B": 16, "T": 1024, "D": 2560},
    {"B": 6, "T": 3000, "D": 3072},
    {"B": 12, "T": 1500, "D": 2048},
    {"B": 32, "T": 768, "D": 1536},
]
SMALL_CASES = [{"B": 2, "T": 45, "D": 40}, {"B": 1, "T": 70, "D": 64}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    n = case["B"] * case["T"] * case["D"]
    return n * (2 + 2 + 4)


def flops(case):
    return 2 * case["B"] * case["T"] * case["D"]
