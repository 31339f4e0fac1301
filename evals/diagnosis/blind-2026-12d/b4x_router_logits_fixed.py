import torch, triton, triton.language as tl


@triton.jit
def router_softmax_kernel(x_ptr, w_ptr, logits_ptr, probs_ptr, T, H, E,
                          stride_xt, stride_we, stride_ot,
                          BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_H: tl.constexpr):
    # logits = x @ w^T (fp32 router), probs = softmax(logits) over experts
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, BLOCK_E)
    offs_h = tl.arange(0, BLOCK_H)
    t_mask = offs_t < T
    e_mask = offs_e < E
    x_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_h[None, :]
    w_ptrs = w_ptr + offs_e[None, :] * stride_we + offs_h[:, None]
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        h_mask = (h0 + offs_h) < H
        x = tl.load(x_ptrs, mask=t_mask[:, None] & h_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=e_mask[None, :] & h_mask[:, None], other=0.0)
        acc = tl.dot(x, w, acc, input_precision="tf32")
        x_ptrs += BLOCK_H
        w_ptrs += BLOCK_H
    out_off = offs_t[:, None] * stride_ot + offs_e[None, :]
    out_mask = t_mask[:, None] & e_mask[None, :]
    tl.store(logits_ptr + out_off, acc, mask=out_mask)
    z = tl.where(e_mask[None, :], acc, float("-inf"))
    z = z - tl.max(z, axis=1)[:, None]
    num = tl.exp(z)
    p = num / tl.sum(num, axis=1)[:, None]
    tl.store(probs_ptr + out_off, p, mask=out_mask)


def entry(x, w):
    T, H = x.shape
    E = w.shape[0]
    logits = torch.empty((T, E), device=x.device, dtype=torch.float32)
    probs = torch.empty_like(logits)
    BLOCK_E = max(16, triton.next_power_of_2(E))
    BLOCK_T = 64
    BLOCK_H = 64 if BLOCK_E <= 128 else 32
    grid = (triton.cdiv(T, BLOCK_T),)
    router_softmax_kernel[grid](x, w, logits, probs, T, H, E,
                                x.stride(0), w.stride(0), logits.stride(0),
                                BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_H=BLOCK_H,
                                num_warps=4, num_stages=3)
    return logits, probs


def reference(x, w):
    logits = x.float() @ w.float().t()
    return logits, torch.softmax(logits, dim=-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, E = case["T"], case["H"], case["E"]
    x = torch.randn((T, H), generator=g, dtype=torch.float32)
    w = torch.randn((E, H), generator=g, dtype=torch.float32) * (H ** -0.5)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "H": 4096, "E": 64},
    {"T": 8192, "H": 7168, "E": 160},
    {"T": 12000, "H": 5120, "E": 128},
    {"T": 32768, "H": 2048, "E": 60},
    {"T": 9973, "H": 6144, "E": 256},
    {"T": 20000, "H": 3584, "E": 64},
]
SMALL_CASES = [{"T": 50, "H": 96, "E": 12}, {"T": 33, "H": 128, "E": 40}]
TOLERANCES = {"float32": (1e-2, 1e-2)}


def bytes_moved(case):
    T, H, E = case["T"], case["H"], case["E"]
    return 4 * (T * H + E * H + 2 * T * E)


def flops(case):
    return 2 * case["T"] * case["H"] * case["E"]


DTYPE_FLOPS = "fp32"
