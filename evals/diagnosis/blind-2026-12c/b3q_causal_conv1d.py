import torch, triton, triton.language as tl


@triton.jit
def causal_conv1d_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, L, D,
                              KW: tl.constexpr, BLOCK_L: tl.constexpr):
    # depthwise causal conv over the sequence + SiLU (Mamba short conv); x, y: [B, L, D] bf16, w: [D, KW]
    d = tl.program_id(0)
    bidx = tl.program_id(1)
    base = bidx.to(tl.int64) * L * D + d
    offs_l = tl.arange(0, BLOCK_L)
    bias = tl.load(b_ptr + d)
    for l0 in range(0, L, BLOCK_L):
        ll = l0 + offs_l
        acc = tl.zeros((BLOCK_L,), dtype=tl.float32) + bias
        for j in tl.static_range(KW):
            src = ll - (KW - 1) + j
            wj = tl.load(w_ptr + d * KW + j)
            xv = tl.load(x_ptr + base + src * D, mask=(src >= 0) & (src < L), other=0.0).to(tl.float32)
            acc += wj * xv
        y = acc * tl.sigmoid(acc)
        tl.store(y_ptr + base + ll * D, y.to(tl.bfloat16), mask=ll < L)


def entry(x, w, b):
    B, L, D = x.shape
    y = torch.empty_like(x)
    causal_conv1d_silu_kernel[(D, B)](x, w, b, y, L, D, KW=w.shape[1], BLOCK_L=256, num_warps=4)
    return y


def reference(x, w, b):
    B, L, D = x.shape
    xt = x.float().transpose(1, 2)
    out = torch.nn.functional.conv1d(xt, w.float()[:, None, :], b.float(), padding=w.shape[1] - 1, groups=D)
    out = torch.nn.functional.silu(out[..., :L])
    return out.transpose(1, 2).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, L, D = case["B"], case["L"], case["D"]
    x = torch.randn(B, L, D, generator=g).to(torch.bfloat16)
    w = torch.randn(D, 4, generator=g) * 0.5
    b = torch.randn(D, generator=g) * 0.1
    return x.to(device), w.to(device), b.to(device)


CASES = [
    {"B": 4, "L": 2048, "D": 4096},
    {"B": 2, "L": 3000, "D": 5120},
    {"B": 16, "L": 1024, "D": 1536},
    {"B": 1, "L": 8192, "D": 8192},
    {"B": 3, "L": 1000, "D": 6144},
]
SMALL_CASES = [{"B": 2, "L": 37, "D": 24}, {"B": 1, "L": 300, "D": 8}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    B, L, D = case["B"], case["L"], case["D"]
    return 2 * 2 * B * L * D + 4 * 5 * D


def flops(case):
    return 12 * case["B"] * case["L"] * case["D"]
