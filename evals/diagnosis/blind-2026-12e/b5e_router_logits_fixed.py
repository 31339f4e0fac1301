import torch, triton, triton.language as tl


@triton.jit
def router_logits_kernel(x_ptr, w_ptr, out_ptr, T, H, E,
                         stride_xt, stride_we, stride_ot,
                         BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_H: tl.constexpr):
    # logits[t, e] = sum_h x[t, h] * w[e, h], accumulated in fp32
    pid_t = tl.program_id(0)
    pid_e = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    mask_t = offs_t < T
    mask_e = offs_e < E
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        offs_h = h0 + tl.arange(0, BLOCK_H)
        mask_h = offs_h < H
        x = tl.load(x_ptr + offs_t[:, None] * stride_xt + offs_h[None, :],
                    mask=mask_t[:, None] & mask_h[None, :], other=0.0)
        # gate weight tile laid out as [BLOCK_H, BLOCK_E]
        w = tl.load(w_ptr + offs_e[None, :] * stride_we + offs_h[:, None],
                    mask=mask_h[:, None] & mask_e[None, :], other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(out_ptr + offs_t[:, None] * stride_ot + offs_e[None, :], acc,
             mask=mask_t[:, None] & mask_e[None, :])


def entry(hidden_states, gate_weight):
    T, H = hidden_states.shape
    E = gate_weight.shape[0]
    out = torch.empty((T, E), device=hidden_states.device, dtype=torch.float32)
    BLOCK_T, BLOCK_E, BLOCK_H = 64, 64, 64
    grid = (triton.cdiv(T, BLOCK_T), triton.cdiv(E, BLOCK_E))
    router_logits_kernel[grid](hidden_states, gate_weight, out, T, H, E,
                               hidden_states.stride(0), gate_weight.stride(0), out.stride(0),
                               BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_H=BLOCK_H, num_warps=4)
    return out


def reference(hidden_states, gate_weight):
    return hidden_states.float() @ gate_weight.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, E = case["T"], case["H"], case["E"]
    x = torch.randn(T, H, generator=g).to(torch.float16)
    w = (torch.randn(E, H, generator=g) * H ** -0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "H": 4096, "E": 64},
    {"T": 12000, "H": 2048, "E": 60},
    {"T": 8192, "H": 7168, "E": 256},
    {"T": 20000, "H": 5120, "E": 160},
    {"T": 32768, "H": 2048, "E": 128},
]
SMALL_CASES = [{"T": 50, "H": 96, "E": 12}, {"T": 33, "H": 64, "E": 70}]
TOLERANCES = {"float32": (2e-3, 2e-3)}


def bytes_moved(case):
    T, H, E = case["T"], case["H"], case["E"]
    return 2 * T * H + 2 * E * H + 4 * T * E


def flops(case):
    return 2 * case["T"] * case["H"] * case["E"]


DTYPE_FLOPS = "fp16"
