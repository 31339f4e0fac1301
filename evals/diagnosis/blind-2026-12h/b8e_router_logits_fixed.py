import torch, triton, triton.language as tl


@triton.jit
def router_logits_kernel(x_ptr, w_ptr, out_ptr, T, E, D,
                         stride_xt, stride_xd, stride_we, stride_wd, stride_ot, stride_oe,
                         BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_D: tl.constexpr):
    # logits[t, e] = sum_d x[t, d] * w_gate[e, d]
    pid_e = tl.program_id(0)
    pid_t = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    offs_d = tl.arange(0, BLOCK_D)
    mask_t = offs_t < T
    mask_e = offs_e < E
    x_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_d[None, :] * stride_xd
    w_ptrs = w_ptr + offs_d[:, None] * stride_wd + offs_e[None, :] * stride_we
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        mask_d = offs_d < D - d0
        x = tl.load(x_ptrs, mask=mask_t[:, None] & mask_d[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=mask_d[:, None] & mask_e[None, :], other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_D * stride_xd
        w_ptrs += BLOCK_D * stride_wd
    out_ptrs = out_ptr + offs_t[:, None] * stride_ot + offs_e[None, :] * stride_oe
    tl.store(out_ptrs, acc, mask=mask_t[:, None] & mask_e[None, :])


def entry(x, w_gate):
    T, D = x.shape
    E = w_gate.shape[0]
    out = torch.empty((T, E), device=x.device, dtype=torch.float32)
    BLOCK_T, BLOCK_E, BLOCK_D = 32, 64, 16
    grid = (triton.cdiv(E, BLOCK_E), triton.cdiv(T, BLOCK_T))
    router_logits_kernel[grid](
        x, w_gate, out, T, E, D,
        x.stride(0), x.stride(1), w_gate.stride(0), w_gate.stride(1), out.stride(0), out.stride(1),
        BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_D=BLOCK_D, num_warps=8,
    )
    return out


def reference(x, w_gate):
    return (x.double() @ w_gate.double().t()).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, D, E = case["T"], case["D"], case["E"]
    x = torch.randn(T, D, generator=g).to(torch.float16)
    w = (torch.randn(E, D, generator=g) / D ** 0.5).to(torch.float16)
    return x.to(device), w.to(device)


CASES = [
    {"T": 16384, "D": 4096, "E": 64},
    {"T": 8192, "D": 7168, "E": 256},
    {"T": 12000, "D": 5120, "E": 160},
    {"T": 32768, "D": 2048, "E": 60},
    {"T": 6000, "D": 7168, "E": 128},
    {"T": 20000, "D": 3584, "E": 64},
]
SMALL_CASES = [{"T": 70, "D": 96, "E": 24}, {"T": 33, "D": 40, "E": 64}]
TOLERANCES = {"float32": (1e-3, 1e-3)}


def bytes_moved(case):
    T, D, E = case["T"], case["D"], case["E"]
    return T * D * 2 + E * D * 2 + T * E * 4


def flops(case):
    return 2 * case["T"] * case["D"] * case["E"]


DTYPE_FLOPS = "fp16"
