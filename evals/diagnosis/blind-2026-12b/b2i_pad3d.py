"""Replication pad 3D on a bf16 NCDHW tensor; planted: flat 1D launch that decomposes every output index with per-element runtime integer division/modulo."""
import torch
import triton
import triton.language as tl


@triton.jit
def pad3d_kernel(x_ptr, out_ptr, total, D, H, W, OD, OH, OW, pd, ph, pw, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    t = offs // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    nc = t // OD
    iw = tl.minimum(tl.maximum(ow - pw, 0), W - 1)
    ih = tl.minimum(tl.maximum(oh - ph, 0), H - 1)
    id_ = tl.minimum(tl.maximum(od - pd, 0), D - 1)
    src = ((nc * D + id_) * H + ih) * W + iw
    v = tl.load(x_ptr + src, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)


def entry(x, pad):
    N, C, D, H, W = x.shape
    pd, ph, pw = pad
    OD, OH, OW = D + 2 * pd, H + 2 * ph, W + 2 * pw
    out = torch.empty((N, C, OD, OH, OW), device=x.device, dtype=x.dtype)
    total = out.numel()
    BLOCK = 1024
    pad3d_kernel[(triton.cdiv(total, BLOCK),)](x, out, total, D, H, W, OD, OH, OW, pd, ph, pw,
                                               BLOCK=BLOCK, num_warps=4)
    return out


def reference(x, pad):
    pd, ph, pw = pad
    return torch.nn.functional.pad(x.float(), (pw, pw, ph, ph, pd, pd), mode="replicate").to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["shape"], generator=g, dtype=torch.float32).to(torch.bfloat16).to(device)
    return (x, tuple(case["pad"]))


CASES = [
    {"shape": [4, 64, 32, 64, 64], "pad": [1, 1, 1]},
    {"shape": [2, 32, 33, 97, 131], "pad": [2, 2, 2]},
    {"shape": [1, 128, 24, 120, 160], "pad": [1, 3, 3]},
    {"shape": [8, 16, 17, 63, 255], "pad": [3, 3, 3]},
    {"shape": [2, 96, 40, 56, 77], "pad": [1, 2, 5]},
]
SMALL_CASES = [{"shape": [1, 3, 4, 5, 7], "pad": [1, 2, 3]}]


def _out_numel(case):
    n, c, d, h, w = case["shape"]
    pd, ph, pw = case["pad"]
    return n * c * (d + 2 * pd) * (h + 2 * ph) * (w + 2 * pw)


def bytes_moved(case):
    n, c, d, h, w = case["shape"]
    return 2 * (n * c * d * h * w + _out_numel(case))


def flops(case):
    return 0
