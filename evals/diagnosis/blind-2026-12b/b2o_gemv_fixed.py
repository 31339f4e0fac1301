"""fp16 GEMV y = W @ x (decode-style linear layer); fixed: 16-row blocks with wider K chunks give 384-1024 programs, filling every SM."""
import torch
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, M, K, stride_wm,
                BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        cmask = cols < K
        w = tl.load(w_ptr + rows[:, None] * stride_wm + cols[None, :],
                    mask=rmask[:, None] & cmask[None, :], other=0.0)
        x = tl.load(x_ptr + cols, mask=cmask, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, y.to(tl.float16), mask=rmask)


def entry(w, x):
    M, K = w.shape
    y = torch.empty(M, device=w.device, dtype=w.dtype)
    BLOCK_M, BLOCK_K = 16, 256
    gemv_kernel[(triton.cdiv(M, BLOCK_M),)](w, x, y, M, K, w.stride(0),
                                            BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, num_warps=4)
    return y


def reference(w, x):
    return (w.float() @ x.float()).to(w.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(case["M"], case["K"], generator=g).to(torch.float16)
    x = torch.randn(case["K"], generator=g).to(torch.float16)
    return (w.to(device), x.to(device))


CASES = [
    {"M": 8192, "K": 8192},
    {"M": 14336, "K": 4096},
    {"M": 6144, "K": 14336},
    {"M": 16384, "K": 5120},
    {"M": 12289, "K": 8192},
]
SMALL_CASES = [{"M": 300, "K": 200}]
TOLERANCES = {"float16": (1e-1, 1e-2)}


def bytes_moved(case):
    return 2 * (case["M"] * case["K"] + case["K"] + case["M"])


def flops(case):
    return 2 * case["M"] * case["K"]
