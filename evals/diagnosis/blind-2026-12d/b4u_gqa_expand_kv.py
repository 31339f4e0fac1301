import torch, triton, triton.language as tl


@triton.jit
def expand_kv_kernel(kv_ptr, out_ptr, n_elements, S, H, D, n_rep,
                     BLOCK: tl.constexpr):
    # out[b, h, s, d] = kv[b, s, h // n_rep, d]
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    d = offs % D
    s = (offs // D) % S
    h = (offs // (S * D)) % H
    b = offs // (H * S * D)
    Hkv = H // n_rep
    src = ((b * S + s) * Hkv + h // n_rep) * D + d
    x = tl.load(kv_ptr + src, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def entry(kv, n_heads):
    # kv: [B, S, Hkv, D] -> [B, H, S, D] with each kv head repeated for its query group
    B, S, Hkv, D = kv.shape
    n_rep = n_heads // Hkv
    out = torch.empty((B, n_heads, S, D), dtype=kv.dtype, device=kv.device)
    n = out.numel()
    BLOCK = 1024
    expand_kv_kernel[(triton.cdiv(n, BLOCK),)](kv, out, n, S, n_heads, D, n_rep,
                                               BLOCK=BLOCK, num_warps=4)
    return out


def reference(kv, n_heads):
    B, S, Hkv, D = kv.shape
    n_rep = n_heads // Hkv
    return kv.transpose(1, 2).repeat_interleave(n_rep, dim=1).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    kv = torch.randn(case["B"], case["S"], case["Hkv"], case["D"], generator=g)
    return kv.to(torch.bfloat16).to(device), case["H"]


CASES = [
    {"B": 8, "S": 4096, "Hkv": 8, "H": 32, "D": 128},
    {"B": 4, "S": 3000, "Hkv": 8, "H": 64, "D": 128},
    {"B": 16, "S": 1500, "Hkv": 4, "H": 28, "D": 128},
    {"B": 2, "S": 8192, "Hkv": 2, "H": 16, "D": 64},
    {"B": 32, "S": 1000, "Hkv": 8, "H": 40, "D": 128},
]
SMALL_CASES = [{"B": 2, "S": 7, "Hkv": 2, "H": 6, "D": 16}, {"B": 1, "S": 13, "Hkv": 1, "H": 4, "D": 32}]


def bytes_moved(case):
    B, S, Hkv, H, D = case["B"], case["S"], case["Hkv"], case["H"], case["D"]
    return B * S * Hkv * D * 2 + B * H * S * D * 2


def flops(case):
    return 0
