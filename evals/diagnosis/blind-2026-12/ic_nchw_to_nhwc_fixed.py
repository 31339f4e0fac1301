"""Convert a bf16 NCHW activation to channels-last (NHWC) storage. Planted: flat output-order div/mod index makes every warp read the input with a stride of H*W (uncoalesced loads)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _nchw_to_nhwc_kernel(x_ptr, y_ptr, C, HW,
                         BLOCK_HW: tl.constexpr, BLOCK_C: tl.constexpr):
    # tiled transpose of one image: read [BLOCK_C, BLOCK_HW] rows along HW,
    # write them along C (the compiler stages the tile through shared memory)
    n = tl.program_id(0)
    pid_hw = tl.program_id(1)
    pid_c = tl.program_id(2)
    hw = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (hw < HW)[:, None] & (c < C)[None, :]
    base = n * C * HW
    v = tl.load(x_ptr + base + c[None, :] * HW + hw[:, None], mask=mask, other=0.0)
    tl.store(y_ptr + base + hw[:, None] * C + c[None, :], v, mask=mask)


def entry(x):
    N, C, H, W = x.shape
    y = torch.empty(N, H, W, C, device=x.device, dtype=x.dtype)
    HW = H * W
    BLOCK_HW = 64
    BLOCK_C = min(64, triton.next_power_of_2(C))
    grid = (N, triton.cdiv(HW, BLOCK_HW), triton.cdiv(C, BLOCK_C))
    _nchw_to_nhwc_kernel[grid](x, y, C, HW, BLOCK_HW=BLOCK_HW, BLOCK_C=BLOCK_C, num_warps=4)
    return y


def reference(x):
    return x.permute(0, 2, 3, 1).contiguous()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["N"], case["C"], case["H"], case["W"], generator=g).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"N": 64, "C": 256, "H": 56, "W": 56},
    {"N": 128, "C": 512, "H": 28, "W": 28},
    {"N": 16, "C": 96, "H": 135, "W": 241},
    {"N": 64, "C": 64, "H": 112, "W": 112},
]
SMALL_CASES = [
    {"N": 2, "C": 5, "H": 3, "W": 7},
    {"N": 1, "C": 48, "H": 9, "W": 10},
]
TOLERANCES = {"bfloat16": (0.0, 0.0)}


def bytes_moved(case):
    return 2 * 2 * case["N"] * case["C"] * case["H"] * case["W"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
