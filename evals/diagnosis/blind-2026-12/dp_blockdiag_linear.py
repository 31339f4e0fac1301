"""Block-diagonal (Monarch-style) linear layer in fp16: y[:, h*B:(h+1)*B] = x[:, h*B:(h+1)*B] @ W[h]^T for H independent B x B blocks. Planted: the per-block product is computed as a broadcast multiply + tl.sum over K-slices, so it runs on FMA units instead of tensor cores."""
import torch
import triton
import triton.language as tl


@triton.jit
def _blockdiag_fwd_kernel(
    X, W, Y,
    T,
    stride_xt, stride_yt,
    BS: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BLOCK_I: tl.constexpr,
):
    pid_t = tl.program_id(0)
    h = tl.program_id(1)

    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_j = tl.arange(0, BS)
    offs_i = tl.arange(0, BLOCK_I)
    t_mask = offs_t < T

    x_base = X + offs_t[:, None] * stride_xt + h * BS
    # W[h] is (out=j, in=i), row-major
    w_base = W + h * BS * BS + offs_j[:, None] * BS

    acc = tl.zeros((BLOCK_T, BS), dtype=tl.float32)
    # block sizes can go down to 8, below the tl.dot minimum, so contract by hand
    for i0 in range(0, BS, BLOCK_I):
        xi = tl.load(x_base + i0 + offs_i[None, :], mask=t_mask[:, None], other=0.0).to(tl.float32)
        wi = tl.load(w_base + i0 + offs_i[None, :]).to(tl.float32)
        acc += tl.sum(xi[:, None, :] * wi[None, :, :], axis=2)

    y_ptrs = Y + offs_t[:, None] * stride_yt + h * BS + offs_j[None, :]
    tl.store(y_ptrs, acc.to(tl.float16), mask=t_mask[:, None])


def entry(x, w):
    T, F = x.shape
    H, BS, _ = w.shape
    y = torch.empty((T, F), device=x.device, dtype=x.dtype)
    BLOCK_T, BLOCK_I = 64, 8
    grid = (triton.cdiv(T, BLOCK_T), H)
    _blockdiag_fwd_kernel[grid](
        x, w, y, T, x.stride(0), y.stride(0),
        BS=BS, BLOCK_T=BLOCK_T, BLOCK_I=BLOCK_I,
        num_warps=8,
    )
    return y


def reference(x, w):
    T, F = x.shape
    H, BS, _ = w.shape
    y = torch.einsum("thi,hji->thj", x.float().view(T, H, BS), w.float())
    return y.reshape(T, F).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, BS = case["T"], case["H"], case["BS"]
    x = torch.randn(T, H * BS, generator=g).to(torch.float16)
    w = (torch.randn(H, BS, BS, generator=g) / BS ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 32768, "H": 16, "BS": 64},
    {"T": 16411, "H": 32, "BS": 64},
    {"T": 12000, "H": 24, "BS": 128},
    {"T": 40000, "H": 12, "BS": 128},
]
SMALL_CASES = [
    {"T": 37, "H": 3, "BS": 16},
    {"T": 130, "H": 2, "BS": 32},
]
TOLERANCES = {"float16": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, BS = case["T"], case["H"], case["BS"]
    return 2 * (2 * T * H * BS + H * BS * BS)


def flops(case):
    return 2 * case["T"] * case["H"] * case["BS"] ** 2

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
