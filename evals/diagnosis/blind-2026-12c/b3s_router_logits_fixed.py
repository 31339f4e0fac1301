import torch, triton, triton.language as tl


@triton.jit
def router_logits_kernel(x_ptr, w_ptr, out_ptr, T, E, H,
                         stride_xt, stride_we, stride_ot,
                         BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_H: tl.constexpr):
    # logits[t, e] = sum_h x[t, h] * w[e, h], accumulated in fp32
    pid_e = tl.program_id(0)
    pid_t = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    offs_h = tl.arange(0, BLOCK_H)
    x_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_h[None, :]
    w_ptrs = w_ptr + offs_e[None, :] * stride_we + offs_h[:, None]
    t_mask = offs_t < T
    e_mask = offs_e < E
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        h_mask = offs_h < H - h0
        a = tl.load(x_ptrs, mask=t_mask[:, None] & h_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=h_mask[:, None] & e_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_H
        w_ptrs += BLOCK_H
    out_ptrs = out_ptr + offs_t[:, None] * stride_ot + offs_e[None, :]
    tl.store(out_ptrs, acc, mask=t_mask[:, None] & e_mask[None, :])


def entry(x, w_gate):
    T, H = x.shape
    E = w_gate.shape[0]
    out = torch.empty((T, E), dtype=torch.float32, device=x.device)
    BLOCK_T = 128
    BLOCK_E = min(64, max(16, triton.next_power_of_2(E)))
    BLOCK_H = 64
    grid = (triton.cdiv(E, BLOCK_E), triton.cdiv(T, BLOCK_T))
    router_logits_kernel[grid](x, w_gate, out, T, E, H,
                               x.stride(0), w_gate.stride(0), out.stride(0),
                               BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_H=BLOCK_H,
                               num_warps=8, num_stages=3)
    return out


def reference(x, w_gate):
    return x.float() @ w_gate.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, E = case["T"], case["H"], case["E"]
    x = torch.randn(T, H, generator=g).to(torch.float16)
    w = (torch.randn(E, H, generator=g) * 0.02).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "H": 4096, "E": 64},
    {"T": 8192, "H": 5120, "E": 128},
    {"T": 6000, "H": 7168, "E": 256},
    {"T": 20000, "H": 2048, "E": 60},
    {"T": 32768, "H": 4096, "E": 8},
    {"T": 9999, "H": 3584, "E": 64},
]
SMALL_CASES = [{"T": 70, "H": 96, "E": 8}, {"T": 33, "H": 128, "E": 20}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    T, H, E = case["T"], case["H"], case["E"]
    return T * H * 2 + E * H * 2 + T * E * 4


def flops(case):
    return 2 * case["T"] * case["H"] * case["E"]


DTYPE_FLOPS = "fp16"
