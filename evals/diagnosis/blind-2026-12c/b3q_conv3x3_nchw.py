import torch, triton, triton.language as tl


@triton.jit
def conv3x3_kernel(x_ptr, w_ptr, y_ptr, C, H, W, OC,
                   BLOCK_P: tl.constexpr, BLOCK_OC: tl.constexpr):
    # y[n, oc, h, w] = sum_{c, kh, kw} x[n, c, h + kh - 1, w + kw - 1] * wp[kh, kw, c, oc]
    # x: NCHW fp16, wp: weights packed as [3, 3, C, OC] fp16, y: NCHW fp16 (stride 1, padding 1)
    pid_p = tl.program_id(0)
    pid_oc = tl.program_id(1)
    n = tl.program_id(2)
    HW = H * W
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_oc = pid_oc * BLOCK_OC + tl.arange(0, BLOCK_OC)
    oh = offs_p // W
    ow = offs_p % W
    p_ok = offs_p < HW
    oc_ok = offs_oc < OC
    x_base = x_ptr + n.to(tl.int64) * C * HW

    acc = tl.zeros((BLOCK_P, BLOCK_OC), dtype=tl.float32)
    for kh in range(3):
        ih = oh + kh - 1
        for kw in range(3):
            iw = ow + kw - 1
            in_ok = p_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_ptrs = x_base + ih * W + iw
            w_ptrs = w_ptr + (kh * 3 + kw) * C * OC + offs_oc
            for c in range(0, C):
                xv = tl.load(x_ptrs + c * HW, mask=in_ok, other=0.0).to(tl.float32)
                wv = tl.load(w_ptrs + c * OC, mask=oc_ok, other=0.0).to(tl.float32)
                acc += xv[:, None] * wv[None, :]

    y_ptrs = y_ptr + n.to(tl.int64) * OC * HW + offs_oc[None, :] * HW + offs_p[:, None]
    tl.store(y_ptrs, acc.to(tl.float16), mask=p_ok[:, None] & oc_ok[None, :])


def entry(x, w):
    N, C, H, W = x.shape
    OC = w.shape[0]
    wp = w.permute(2, 3, 1, 0).contiguous()
    y = torch.empty((N, OC, H, W), device=x.device, dtype=torch.float16)
    BLOCK_P, BLOCK_OC = 128, 64
    grid = (triton.cdiv(H * W, BLOCK_P), triton.cdiv(OC, BLOCK_OC), N)
    conv3x3_kernel[grid](x, wp, y, C, H, W, OC, BLOCK_P=BLOCK_P, BLOCK_OC=BLOCK_OC,
                         num_warps=4, num_stages=3)
    return y


def reference(x, w):
    return torch.nn.functional.conv2d(x.float(), w.float(), padding=1).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    N, C, H, W, OC = case["N"], case["C"], case["H"], case["W"], case["OC"]
    x = torch.randn(N, C, H, W, generator=g).to(torch.float16)
    w = (torch.randn(OC, C, 3, 3, generator=g) / (9 * C) ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"N": 8, "C": 128, "H": 56, "W": 56, "OC": 128},
    {"N": 4, "C": 256, "H": 28, "W": 28, "OC": 256},
    {"N": 16, "C": 64, "H": 64, "W": 64, "OC": 64},
    {"N": 8, "C": 96, "H": 50, "W": 50, "OC": 192},
    {"N": 2, "C": 320, "H": 40, "W": 40, "OC": 320},
]
SMALL_CASES = [{"N": 2, "C": 16, "H": 7, "W": 9, "OC": 16}, {"N": 1, "C": 24, "H": 5, "W": 6, "OC": 40}]
TOLERANCES = {"float16": (3e-2, 3e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    N, C, H, W, OC = case["N"], case["C"], case["H"], case["W"], case["OC"]
    return 2 * (N * C * H * W + OC * C * 9 + N * OC * H * W)


def flops(case):
    N, C, H, W, OC = case["N"], case["C"], case["H"], case["W"], case["OC"]
    return 2 * N * H * W * OC * C * 9
