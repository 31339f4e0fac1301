import torch
import triton
import triton.language as tl


# ViT patch extraction: [B, C, H, W] image -> [B, num_patches, C * P * P] token
# matrix (patches in row-major grid order, each flattened as (c, ky, kx)),
# ready for the patch-embedding GEMM.
@triton.jit
def _patchify_kernel(img_ptr, out_ptr, n_elem,
                     C, H, W, P, GW, n_patches, patch_dim,
                     BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem

    # flat output index -> (image, patch, feature)
    k = offs % patch_dim
    p = (offs // patch_dim) % n_patches
    b = offs // (patch_dim * n_patches)

    # feature -> (channel, row in patch, col in patch); patch -> grid (row, col)
    c = k // (P * P)
    ky = (k // P) % P
    kx = k % P
    py = p // GW
    px = p % GW

    src = ((b * C + c) * H + py * P + ky) * W + px * P + kx
    v = tl.load(img_ptr + src, mask=mask, other=0.0)
    tl.store(out_ptr + offs, v, mask=mask)


def entry(img, patch_size):
    B, C, H, W = img.shape
    P = int(patch_size)
    GH, GW = H // P, W // P
    n_patches = GH * GW
    patch_dim = C * P * P
    out = torch.empty((B, n_patches, patch_dim), dtype=img.dtype, device=img.device)
    n = out.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    _patchify_kernel[grid](img, out, n, C, H, W, P, GW, n_patches, patch_dim, BLOCK=BLOCK)
    return out


def reference(img, patch_size):
    B, C, H, W = img.shape
    P = int(patch_size)
    GH, GW = H // P, W // P
    x = img.reshape(B, C, GH, P, GW, P)
    x = x.permute(0, 2, 4, 1, 3, 5)              # B, GH, GW, C, P, P
    return x.reshape(B, GH * GW, C * P * P).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, C, H, W = case["B"], case["C"], case["H"], case["W"]
    img = torch.randn((B, C, H, W), generator=g, dtype=torch.float32).to(torch.bfloat16)
    return img.to(device), case["P"]


CASES = [
    {"B": 256, "C": 3, "H": 224, "W": 224, "P": 14},
    {"B": 96, "C": 3, "H": 336, "W": 336, "P": 14},
    {"B": 48, "C": 3, "H": 518, "W": 518, "P": 14},
    {"B": 64, "C": 3, "H": 448, "W": 448, "P": 14},
    {"B": 160, "C": 3, "H": 224, "W": 336, "P": 14},
    {"B": 128, "C": 3, "H": 280, "W": 280, "P": 14},
]

SMALL_CASES = [
    {"B": 2, "C": 3, "H": 28, "W": 42, "P": 14},
    {"B": 1, "C": 2, "H": 24, "W": 16, "P": 8},
]


def bytes_moved(case):
    B, C, H, W, P = case["B"], case["C"], case["H"], case["W"], case["P"]
    n = B * C * (H // P) * P * (W // P) * P
    return 2 * n * 2


def flops(case):
    return 0
