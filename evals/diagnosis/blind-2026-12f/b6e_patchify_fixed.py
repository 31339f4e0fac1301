import torch
import triton
import triton.language as tl


# ViT patch extraction: [B, C, H, W] image -> [B, num_patches, C * P * P] token
# matrix (patches in row-major grid order, each flattened as (c, ky, kx)),
# ready for the patch-embedding GEMM.  Each program takes one row of patches
# (all C * P image rows it spans) over a range of image columns.
@triton.jit
def _patchify_kernel(img_ptr, out_ptr,
                     C, H, W, GH, GW,
                     P: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr):
    pid_row = tl.program_id(0)          # (image, patch-grid row)
    pid_col = tl.program_id(1)
    b = pid_row // GH
    py = pid_row % GH

    r = tl.arange(0, BLOCK_R)           # (channel, row in patch)
    c = r // P
    ky = r % P
    rmask = r < C * P

    x = pid_col * BLOCK_W + tl.arange(0, BLOCK_W)
    xmask = x < W
    px = x // P
    kx = x % P

    mask = rmask[:, None] & xmask[None, :]
    src = img_ptr + ((b * C + c) * H + py * P + ky)[:, None] * W + x[None, :]
    v = tl.load(src, mask=mask, other=0.0)

    patch_dim = C * P * P
    dst_row = (c * (P * P) + ky * P)[:, None]
    dst_col = ((b * GH + py) * GW + px)[None, :] * patch_dim + kx[None, :]
    tl.store(out_ptr + dst_row + dst_col, v, mask=mask)


def entry(img, patch_size):
    B, C, H, W = img.shape
    P = int(patch_size)
    GH, GW = H // P, W // P
    n_patches = GH * GW
    patch_dim = C * P * P
    out = torch.empty((B, n_patches, patch_dim), dtype=img.dtype, device=img.device)
    BLOCK_W = 128
    grid = (B * GH, triton.cdiv(GW * P, BLOCK_W))
    _patchify_kernel[grid](img, out, C, H, W, GH, GW,
                           P=P, BLOCK_R=triton.next_power_of_2(C * P), BLOCK_W=BLOCK_W,
                           num_warps=8)
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
