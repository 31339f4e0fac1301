import torch, triton, triton.language as tl


@triton.jit
def lora_shrink_kernel(x_ptr, a_ptr, out_ptr, T, H, scaling,
                       stride_xt, stride_ah, stride_ot,
                       R: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr):
    # out[t, :] = scaling * x[t, :] @ A   (A: [H, R] low-rank down projection)
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_h = tl.arange(0, BLOCK_H)
    offs_r = tl.arange(0, R)
    t_mask = offs_t < T
    acc = tl.zeros((BLOCK_T, R), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        h = h0 + offs_h
        h_mask = h < H
        x = tl.load(x_ptr + offs_t[:, None] * stride_xt + h[None, :],
                    mask=t_mask[:, None] & h_mask[None, :], other=0.0)
        a = tl.load(a_ptr + h[:, None] * stride_ah + offs_r[None, :],
                    mask=h_mask[:, None], other=0.0)
        acc += tl.sum(x.to(tl.float32)[:, :, None] * a.to(tl.float32)[None, :, :], axis=1)
    acc = acc * scaling
    tl.store(out_ptr + offs_t[:, None] * stride_ot + offs_r[None, :],
             acc.to(out_ptr.dtype.element_ty), mask=t_mask[:, None])


def entry(x, lora_a, scaling):
    T, H = x.shape
    R = lora_a.shape[1]
    out = torch.empty((T, R), device=x.device, dtype=x.dtype)
    BLOCK_T, BLOCK_H = 16, 32
    lora_shrink_kernel[(triton.cdiv(T, BLOCK_T),)](x, lora_a, out, T, H, scaling,
                                                   x.stride(0), lora_a.stride(0), out.stride(0),
                                                   R=R, BLOCK_T=BLOCK_T, BLOCK_H=BLOCK_H,
                                                   num_warps=4)
    return out


def reference(x, lora_a, scaling):
    return ((x.float() @ lora_a.float()) * scaling).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, R = case["T"], case["H"], case["R"]
    x = torch.randn((T, H), generator=g, dtype=torch.float32).to(torch.float16)
    a = (torch.randn((H, R), generator=g, dtype=torch.float32) * (H ** -0.5)).to(torch.float16)
    return x.to(device), a.to(device), 2.0


CASES = [
    {"T": 16384, "H": 4096, "R": 16},
    {"T": 8192, "H": 8192, "R": 32},
    {"T": 12288, "H": 5120, "R": 16},
    {"T": 20000, "H": 3584, "R": 32},
    {"T": 9999, "H": 7168, "R": 16},
    {"T": 32768, "H": 2048, "R": 16},
]
SMALL_CASES = [{"T": 37, "H": 200, "R": 16}, {"T": 20, "H": 128, "R": 32}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, H, R = case["T"], case["H"], case["R"]
    return 2 * (T * H + H * R + T * R)


def flops(case):
    return 2 * case["T"] * case["H"] * case["R"]


DTYPE_FLOPS = "fp16"
