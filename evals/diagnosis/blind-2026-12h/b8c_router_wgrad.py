import torch, triton, triton.language as tl


@triton.jit
def router_wgrad_kernel(g_ptr, x_ptr, dw_ptr, T, E, H,
                        stride_gt, stride_xt, stride_we,
                        BLOCK_E: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_T: tl.constexpr):
    # dw[e, h] = sum_t g[t, e] * x[t, h]
    pid_h = tl.program_id(0)
    pid_e = tl.program_id(1)
    offs_e = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    offs_t = tl.arange(0, BLOCK_T)
    g_ptrs = g_ptr + offs_e[:, None] + offs_t[None, :] * stride_gt
    x_ptrs = x_ptr + offs_t[:, None] * stride_xt + offs_h[None, :]

    acc = tl.zeros((BLOCK_E, BLOCK_H), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t_ok = offs_t < T - t0
        g = tl.load(g_ptrs, mask=(offs_e[:, None] < E) & t_ok[None, :], other=0.0)
        x = tl.load(x_ptrs, mask=t_ok[:, None] & (offs_h[None, :] < H), other=0.0)
        acc = tl.dot(g, x, acc)
        g_ptrs += BLOCK_T * stride_gt
        x_ptrs += BLOCK_T * stride_xt

    dw_ptrs = dw_ptr + offs_e[:, None] * stride_we + offs_h[None, :]
    tl.store(dw_ptrs, acc, mask=(offs_e[:, None] < E) & (offs_h[None, :] < H))


def entry(x, grad_logits):
    # x: [T, H] router input, grad_logits: [T, E]; returns the fp32 gradient of the router weight [E, H]
    T, H = x.shape
    E = grad_logits.shape[1]
    dw = torch.empty((E, H), device=x.device, dtype=torch.float32)
    BLOCK_E, BLOCK_H, BLOCK_T = 64, 256, 64
    grid = (triton.cdiv(H, BLOCK_H), triton.cdiv(E, BLOCK_E))
    router_wgrad_kernel[grid](
        grad_logits, x, dw, T, E, H,
        grad_logits.stride(0), x.stride(0), dw.stride(0),
        BLOCK_E=BLOCK_E, BLOCK_H=BLOCK_H, BLOCK_T=BLOCK_T, num_warps=8, num_stages=3)
    return dw


def reference(x, grad_logits):
    return grad_logits.float().t() @ x.float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, E = case["T"], case["H"], case["E"]
    x = torch.randn(T, H, generator=g, dtype=torch.float32).to(torch.float16)
    gl = torch.randn(T, E, generator=g, dtype=torch.float32).to(torch.float16)
    return x.to(device), gl.to(device)


CASES = [
    {"T": 32768, "H": 4096, "E": 16},
    {"T": 65536, "H": 2048, "E": 64},
    {"T": 24576, "H": 3584, "E": 64},
    {"T": 40000, "H": 2880, "E": 32},
    {"T": 50000, "H": 2560, "E": 16},
    {"T": 49152, "H": 1536, "E": 128},
]
SMALL_CASES = [{"T": 300, "H": 200, "E": 16}, {"T": 129, "H": 96, "E": 80}]
TOLERANCES = {"float32": (5e-2, 1e-3)}


def bytes_moved(case):
    T, H, E = case["T"], case["H"], case["E"]
    return 2 * T * H + 2 * T * E + 4 * E * H


def flops(case):
    T, H, E = case["T"], case["H"], case["E"]
    return 2 * T * H * E


DTYPE_FLOPS = "fp16"
