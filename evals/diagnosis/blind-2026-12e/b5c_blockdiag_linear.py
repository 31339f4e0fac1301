import torch, triton, triton.language as tl


@triton.jit
def blockdiag_linear_kernel(x_ptr, w_ptr, y_ptr, T, H,
                            stride_xt, stride_yt,
                            BS: tl.constexpr, BLOCK_T: tl.constexpr, CHUNK: tl.constexpr):
    # block-diagonal (Monarch) factor: y[t, g*BS + j] = sum_i x[t, g*BS + i] * w[g, j, i]
    # w[g] is stored like an nn.Linear weight: [out, in]
    pid_t = tl.program_id(0)
    g = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_j = tl.arange(0, BS)
    offs_c = tl.arange(0, CHUNK)
    t_mask = offs_t < T

    x_base = x_ptr + offs_t[:, None] * stride_xt + g * BS
    w_base = w_ptr + g * BS * BS + offs_j[:, None] * BS

    acc = tl.zeros((BLOCK_T, BS), dtype=tl.float32)
    for i0 in range(0, BS, CHUNK):
        xs = tl.load(x_base + (i0 + offs_c)[None, :], mask=t_mask[:, None], other=0.0).to(tl.float32)
        ws = tl.load(w_base + (i0 + offs_c)[None, :]).to(tl.float32)
        acc += tl.sum(xs[:, None, :] * ws[None, :, :], axis=2)

    y_ptrs = y_ptr + offs_t[:, None] * stride_yt + g * BS + offs_j[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=t_mask[:, None])


def entry(x, w):
    T, H = x.shape
    G, BS, _ = w.shape
    y = torch.empty_like(x)
    BLOCK_T = 32
    grid = (triton.cdiv(T, BLOCK_T), G)
    blockdiag_linear_kernel[grid](x, w, y, T, H, x.stride(0), y.stride(0),
                                  BS=BS, BLOCK_T=BLOCK_T, CHUNK=8, num_warps=8)
    return y


def reference(x, w):
    T, H = x.shape
    G, BS, _ = w.shape
    y = torch.einsum("tgi,gji->tgj", x.float().view(T, G, BS), w.float())
    return y.reshape(T, H).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, G, BS = case["T"], case["G"], case["BS"]
    x = torch.randn(T, G * BS, generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(G, BS, BS, generator=g, dtype=torch.float32) / BS ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "G": 64, "BS": 64},
    {"T": 12000, "G": 48, "BS": 64},
    {"T": 8192, "G": 32, "BS": 128},
    {"T": 9000, "G": 40, "BS": 128},
    {"T": 20000, "G": 24, "BS": 64},
]
SMALL_CASES = [{"T": 50, "G": 3, "BS": 64}, {"T": 17, "G": 2, "BS": 128}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, G, BS = case["T"], case["G"], case["BS"]
    return 2 * (2 * T * G * BS + G * BS * BS)


def flops(case):
    return 2 * case["T"] * case["G"] * case["BS"] * case["BS"]


DTYPE_FLOPS = "fp16"
