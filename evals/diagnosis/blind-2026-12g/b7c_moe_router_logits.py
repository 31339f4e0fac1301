import torch, triton, triton.language as tl


# MoE gate: logits[t, e] = sum_h x[t, h] * w_gate[e, h], accumulated in fp32.
@triton.jit
def _router_logits_kernel(x_ptr, w_ptr, out_ptr, T, H, E,
                          stride_xt, stride_we, stride_ot,
                          BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_E: tl.constexpr):
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, BLOCK_E)
    offs_h = tl.arange(0, BLOCK_H)
    mask_t = offs_t < T
    mask_e = offs_e < E

    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        hh = h0 + offs_h
        mask_h = hh < H
        x = tl.load(x_ptr + offs_t[:, None] * stride_xt + hh[None, :],
                    mask=mask_t[:, None] & mask_h[None, :], other=0.0)
        w = tl.load(w_ptr + offs_e[:, None] * stride_we + hh[None, :],
                    mask=mask_e[:, None] & mask_h[None, :], other=0.0)
        prod = x.to(tl.float32)[:, None, :] * w.to(tl.float32)[None, :, :]
        acc += tl.sum(prod, axis=2)

    tl.store(out_ptr + offs_t[:, None] * stride_ot + offs_e[None, :], acc,
             mask=mask_t[:, None] & mask_e[None, :])


def entry(x, w_gate):
    T, H = x.shape
    E = w_gate.shape[0]
    out = torch.empty((T, E), device=x.device, dtype=torch.float32)
    BLOCK_E = max(16, triton.next_power_of_2(E))
    BLOCK_H = max(16, 1024 // BLOCK_E)
    BLOCK_T = 16
    grid = (triton.cdiv(T, BLOCK_T),)
    _router_logits_kernel[grid](x, w_gate, out, T, H, E,
                                x.stride(0), w_gate.stride(0), out.stride(0),
                                BLOCK_T=BLOCK_T, BLOCK_H=BLOCK_H, BLOCK_E=BLOCK_E,
                                num_warps=4, num_stages=3)
    return out


def reference(x, w_gate):
    return x.float() @ w_gate.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(case["T"], case["H"], generator=g, dtype=torch.float32).to(torch.float16)
    w = (torch.randn(case["E"], case["H"], generator=g, dtype=torch.float32)
         * case["H"] ** -0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "H": 4096, "E": 64},
    {"T": 32768, "H": 2048, "E": 60},
    {"T": 12000, "H": 5120, "E": 40},
    {"T": 65536, "H": 1024, "E": 32},
    {"T": 20000, "H": 3584, "E": 64},
]
SMALL_CASES = [{"T": 40, "H": 96, "E": 60}, {"T": 33, "H": 64, "E": 32}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    T, H, E = case["T"], case["H"], case["E"]
    return 2 * (T * H + E * H) + 4 * T * E


def flops(case):
    return 2 * case["T"] * case["H"] * case["E"]


DTYPE_FLOPS = "fp16"
