import torch
import triton
import triton.language as tl


@triton.jit
def router_logits_kernel(h_ptr, w_ptr, out_ptr, T, E, K,
                         stride_ht, stride_we, stride_ot,
                         BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr):
    # logits[t, e] = sum_k h[t, k] * w[e, k]
    pid_t = tl.program_id(0)
    pid_e = tl.program_id(1)
    rt = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    re = pid_e * BLOCK_E + tl.arange(0, BLOCK_E)
    rk = tl.arange(0, BLOCK_K)
    h_ptrs = h_ptr + rt[:, None] * stride_ht + rk[None, :]
    w_ptrs = w_ptr + re[None, :] * stride_we + rk[:, None]
    t_mask = rt[:, None] < T
    e_mask = re[None, :] < E
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_mask = rk < K - k * BLOCK_K
        h = tl.load(h_ptrs, mask=t_mask & k_mask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=e_mask & k_mask[:, None], other=0.0)
        acc = tl.dot(h, w, acc, input_precision="ieee")
        h_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    tl.store(out_ptr + rt[:, None] * stride_ot + re[None, :], acc, mask=t_mask & e_mask)


def entry(hidden, weight):
    T, K = hidden.shape
    E = weight.shape[0]
    out = torch.empty((T, E), device=hidden.device, dtype=torch.float32)
    BLOCK_T, BLOCK_E, BLOCK_K = 128, 64, 32
    grid = (triton.cdiv(T, BLOCK_T), triton.cdiv(E, BLOCK_E))
    router_logits_kernel[grid](hidden, weight, out, T, E, K,
                               hidden.stride(0), weight.stride(0), out.stride(0),
                               BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, BLOCK_K=BLOCK_K,
                               num_warps=4, num_stages=3)
    return out


def reference(hidden, weight):
    return hidden.float() @ weight.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, K, E = case["T"], case["K"], case["E"]
    hidden = torch.randn(T, K, generator=g, dtype=torch.float32)
    weight = torch.randn(E, K, generator=g, dtype=torch.float32) * (K ** -0.5)
    return hidden.to(device), weight.to(device)


CASES = [
    {"T": 16384, "K": 4096, "E": 64},
    {"T": 16384, "K": 2048, "E": 128},
    {"T": 4096, "K": 7168, "E": 256},
    {"T": 6000, "K": 5120, "E": 160},
    {"T": 12288, "K": 3072, "E": 96},
    {"T": 10000, "K": 2880, "E": 128},
]
SMALL_CASES = [{"T": 40, "K": 96, "E": 24}, {"T": 130, "K": 64, "E": 70}]
TOLERANCES = {"float32": (1e-2, 1e-2)}
DTYPE_FLOPS = "tf32"


def bytes_moved(case):
    T, K, E = case["T"], case["K"], case["E"]
    return 4 * (T * K + E * K + T * E)


def flops(case):
    return 2 * case["T"] * case["K"] * case["E"]
