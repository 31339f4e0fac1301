import torch, triton, triton.language as tl


# MoE router: logits[t, e] = <x[t, :], w_gate[e, :]>, accumulated and returned in
# fp32 so the top-k / softmax that follows sees full-precision scores.

@triton.jit
def _router_logits_kernel(x_ptr, w_ptr, out_ptr, T, E, D,
                          stride_xt, stride_we, stride_ot,
                          BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_e = tl.cdiv(E, BLOCK_E)
    pid_t = pid // num_pid_e
    pid_e = pid % num_pid_e

    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    offs_d = tl.arange(0, BLOCK_D)
    mask_t = offs_t < T
    mask_e = offs_e < E

    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        dd = d0 + offs_d
        mask_d = dd < D
        x = tl.load(x_ptr + offs_t[:, None] * stride_xt + dd[None, :],
                    mask=mask_t[:, None] & mask_d[None, :], other=0.0)
        wt = tl.load(w_ptr + offs_e[None, :] * stride_we + dd[:, None],
                     mask=mask_d[:, None] & mask_e[None, :], other=0.0)
        acc = tl.dot(x, wt, acc)

    tl.store(out_ptr + offs_t[:, None] * stride_ot + offs_e[None, :], acc,
             mask=mask_t[:, None] & mask_e[None, :])


def entry(x, w_gate):
    T, D = x.shape
    E = w_gate.shape[0]
    out = torch.empty((T, E), device=x.device, dtype=torch.float32)
    BLOCK_T, BLOCK_D = 64, 64
    BLOCK_E = min(max(triton.next_power_of_2(E), 16), 64)
    grid = (triton.cdiv(T, BLOCK_T) * triton.cdiv(E, BLOCK_E),)
    _router_logits_kernel[grid](x, w_gate, out, T, E, D,
                                x.stride(0), w_gate.stride(0), out.stride(0),
                                BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_D=BLOCK_D, num_warps=4)
    return out


def reference(x, w_gate):
    return x.float() @ w_gate.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, D, E = case["T"], case["D"], case["E"]
    x = torch.randn(T, D, generator=g).to(torch.float16)
    w = (torch.randn(E, D, generator=g) / D ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "D": 4096, "E": 8},
    {"T": 8192, "D": 7168, "E": 256},
    {"T": 16384, "D": 2048, "E": 60},
    {"T": 12000, "D": 5120, "E": 160},
    {"T": 10000, "D": 4096, "E": 128},
    {"T": 20000, "D": 2048, "E": 64},
]
SMALL_CASES = [{"T": 40, "D": 96, "E": 8}, {"T": 17, "D": 64, "E": 60}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    T, D, E = case["T"], case["D"], case["E"]
    return 2 * (T * D + E * D) + 4 * T * E


def flops(case):
    return 2 * case["T"] * case["D"] * case["E"]


DTYPE_FLOPS = "fp16"
