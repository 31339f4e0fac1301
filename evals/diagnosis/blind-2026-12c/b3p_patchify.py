import torch
import triton
import triton.language as tl


@triton.jit
def patchify_kernel(x_ptr, out_ptr, n_elements, C, H, W, P,
                    BLOCK: tl.constexpr):
    # out[b, ph * NPW + pw, (c * P + i) * P + j] = x[b, c, ph * P + i, pw * P + j]
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    NPH = H // P
    NPW = W // P
    patch_len = C * P * P
    col = offs % patch_len
    row = offs // patch_len
    pw = row % NPW
    row = row // NPW
    ph = row % NPH
    b = row // NPH
    j = col % P
    t = col // P
    i = t % P
    c = t // P
    src = ((b * C + c) * H + ph * P + i) * W + pw * P + j
    x = tl.load(x_ptr + src, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def entry(x, patch):
    B, C, H, W = x.shape
    nph, npw = H // patch, W // patch
    out = torch.empty((B, nph * npw, C * patch * patch), device=x.device, dtype=x.dtype)
    n = out.numel()
    BLOCK = 1024
    patchify_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, C, H, W, patch, BLOCK=BLOCK, num_warps=4)
    return out


def reference(x, patch):
    B, C, H, W = x.shape
    p = patch
    y = x.view(B, C, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5)
    return y.reshape(B, (H // p) * (W // p), C * p * p).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["b"], case["c"], case["h"], case["w"], generator=g)
    return x.to(torch.bfloat16).to(device), case["p"]


CASES = [
    {"b": 256, "c": 3, "h": 224, "w": 224, "p": 14},
    {"b": 64, "c": 3, "h": 518, "w": 518, "p": 14},
    {"b": 128, "c": 3, "h": 336, "w": 336, "p": 14},
    {"b": 64, "c": 3, "h": 448, "w": 448, "p": 14},
    {"b": 96, "c": 3, "h": 384, "w": 384, "p": 12},
    {"b": 16, "c": 3, "h": 980, "w": 980, "p": 14},
]
SMALL_CASES = [{"b": 2, "c": 3, "h": 28, "w": 42, "p": 14}, {"b": 1, "c": 2, "h": 24, "w": 36, "p": 12}]


def bytes_moved(case):
    return 2 * 2 * case["b"] * case["c"] * case["h"] * case["w"]


def flops(case):
    return 0
