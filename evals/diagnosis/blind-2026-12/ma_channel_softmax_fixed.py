"""Softmax over the class/channel axis of NCHW fp32 segmentation logits [B, C, H, W] (dim=1). Planted: the channel axis is made contiguous by materialising NCHW->NHWC and back with two transpose kernels around a row softmax, i.e. three kernels and three round trips to HBM where one strided-axis reduction kernel would do."""
import torch
import triton
import triton.language as tl


@triton.jit
def _channel_softmax_kernel(
    x_ptr, y_ptr, C, HW,
    stride_b, stride_c,
    BLOCK_C: tl.constexpr, BLOCK_HW: tl.constexpr,
):
    # reduce along the strided channel axis directly: a [BLOCK_C, BLOCK_HW] tile is contiguous along
    # the pixel axis, so loads/stores stay coalesced and the softmax is a reduction over axis 0
    pid_hw = tl.program_id(0)
    b = tl.program_id(1)
    c = tl.arange(0, BLOCK_C)
    hw = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    mask = (c < C)[:, None] & (hw < HW)[None, :]
    offs = b * stride_b + c[:, None] * stride_c + hw[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)[None, :]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)[None, :]
    tl.store(y_ptr + offs, y, mask=mask)


def entry(x):
    B, C, H, W = x.shape
    HW = H * W
    out = torch.empty_like(x)
    BLOCK_C = triton.next_power_of_2(C)
    BLOCK_HW = max(32, min(256, 4096 // BLOCK_C))
    num_warps = 4 if BLOCK_C * BLOCK_HW <= 4096 else 8
    _channel_softmax_kernel[(triton.cdiv(HW, BLOCK_HW), B)](
        x, out, C, HW, C * HW, HW,
        BLOCK_C=BLOCK_C, BLOCK_HW=BLOCK_HW, num_warps=num_warps,
    )
    return out


def reference(x):
    return torch.softmax(x, dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, C, H, W = case["B"], case["C"], case["H"], case["W"]
    x = torch.randn(B, C, H, W, generator=g) * 3.0
    return (x.to(device),)


CASES = [
    {"B": 8, "C": 19, "H": 512, "W": 1024},
    {"B": 4, "C": 150, "H": 256, "W": 256},
    {"B": 16, "C": 21, "H": 321, "W": 321},
    {"B": 2, "C": 171, "H": 512, "W": 512},
]

SMALL_CASES = [
    {"B": 2, "C": 5, "H": 7, "W": 9},
    {"B": 1, "C": 21, "H": 10, "W": 13},
]

TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return case["B"] * case["C"] * case["H"] * case["W"] * 4 * 2


def flops(case):
    return case["B"] * case["C"] * case["H"] * case["W"] * 5

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
