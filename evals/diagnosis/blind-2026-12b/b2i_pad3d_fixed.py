"""Replication pad 3D on a bf16 NCDHW tensor; fixed: 2D grid over (output row, W block) so the div/mod decomposition is one scalar per program."""
import torch
import triton
import triton.language as tl


@triton.jit
def pad3d_kernel(x_ptr, out_ptr, D, H, W, OD, OH, OW, pd, ph, pw, BLOCK_W: tl.constexpr):
    row = tl.program_id(0)          # flat index over (n*c, od, oh)
    pid_w = tl.program_id(1)
    oh = row % OH
    t = row // OH
    od = t % OD
    nc = t // OD
    ih = tl.minimum(tl.maximum(oh - ph, 0), H - 1)
    id_ = tl.minimum(tl.maximum(od - pd, 0), D - 1)
    src_row = x_ptr + ((nc * D + id_) * H + ih).to(tl.int64) * W
    dst_row = out_ptr + row.to(tl.int64) * OW
    ow = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = ow < OW
    iw = tl.minimum(tl.maximum(ow - pw, 0), W - 1)
    v = tl.load(src_row + iw, mask=mask)
    tl.store(dst_row + ow, v, mask=mask)


def entry(x, pad):
    N, C, D, H, W = x.shape
    pd, ph, pw = pad
    OD, OH, OW = D + 2 * pd, H + 2 * ph, W + 2 * pw
    out = torch.empty((N, C, OD, OH, OW), device=x.device, dtype=x.dtype)
    BLOCK_W = min(1024, triton.next_power_of_2(OW))
    grid = (N * C * OD * OH, triton.cdiv(OW, BLOCK_W))
    pad3d_kernel[grid](x, out, D, H, W, OD, OH, OW, pd, ph, pw,
                       BLOCK_W=BLOCK_W, num_warps=max(1, min(4, BLOCK_W // 64)))
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
