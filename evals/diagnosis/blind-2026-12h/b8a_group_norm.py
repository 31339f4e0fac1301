import torch, triton, triton.language as tl


@triton.jit
def _group_norm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, HW, G, eps,
                           CPG: tl.constexpr, BLOCK: tl.constexpr):
    # group statistics over CPG * HW values, then normalize + per-channel affine
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    group_size = CPG * HW
    base = n.to(tl.int64) * C * HW + g * group_size
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + offs, mask=offs < group_size, other=0.0).to(tl.float32)
        acc += v
        acc_sq += v * v
    mean = tl.sum(acc, axis=0) / group_size
    var = tl.maximum(tl.sum(acc_sq, axis=0) / group_size - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for ci in range(CPG):
        c = g * CPG + ci
        scale = tl.load(w_ptr + c).to(tl.float32) * rstd
        shift = tl.load(b_ptr + c).to(tl.float32) - mean * scale
        cbase = base + ci * HW
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            m = offs < HW
            v = tl.load(x_ptr + cbase + offs, mask=m, other=0.0).to(tl.float32)
            tl.store(y_ptr + cbase + offs, (v * scale + shift).to(y_ptr.dtype.element_ty), mask=m)


def entry(x, weight, bias, num_groups):
    # x: [N, C, H, W]; weight, bias: [C]
    N, C, H, W = x.shape
    x = x.contiguous()
    y = torch.empty_like(x)
    G = num_groups
    _group_norm_fwd_kernel[(N * G,)](x, weight, bias, y, C, H * W, G, 1e-5,
                                     CPG=C // G, BLOCK=2048, num_warps=8)
    return y


def reference(x, weight, bias, num_groups):
    return torch.nn.functional.group_norm(x.float(), num_groups, weight.float(), bias.float(), 1e-5).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W = case["N"], case["C"], case["H"], case["W"]
    x = (torch.randn((N, C, H, W), generator=g, dtype=torch.float32) * 1.5 + 0.3).to(torch.float16)
    w = (1.0 + 0.1 * torch.randn((C,), generator=g, dtype=torch.float32)).to(torch.float16)
    b = (0.1 * torch.randn((C,), generator=g, dtype=torch.float32)).to(torch.float16)
    return (x.to(device), w.to(device), b.to(device), case["G"])


CASES = [
    {"N": 2, "C": 320, "H": 128, "W": 128, "G": 32},
    {"N": 2, "C": 640, "H": 96, "W": 96, "G": 32},
    {"N": 1, "C": 256, "H": 512, "W": 512, "G": 32},
    {"N": 4, "C": 256, "H": 160, "W": 160, "G": 32},
    {"N": 1, "C": 512, "H": 256, "W": 256, "G": 32},
    {"N": 2, "C": 960, "H": 64, "W": 64, "G": 32},
]
SMALL_CASES = [{"N": 2, "C": 8, "H": 9, "W": 11, "G": 4}, {"N": 1, "C": 12, "H": 16, "W": 16, "G": 3}]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    n = case["N"] * case["C"] * case["H"] * case["W"]
    return 2 * 2 * n + 4 * case["C"]


def flops(case):
    return 7 * case["N"] * case["C"] * case["H"] * case["W"]
