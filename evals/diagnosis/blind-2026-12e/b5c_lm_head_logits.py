import torch, triton, triton.language as tl


@triton.jit
def lm_head_kernel(h_ptr, w_ptr, out_ptr, T, V, D,
                   stride_ht, stride_wv, stride_ot,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
    # logits[t, v] = sum_d h[t, d] * w[v, d]   (w is the [V, D] embedding / output matrix)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(T, BLOCK_M)
    num_pid_n = tl.cdiv(V, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % T
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % V
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = h_ptr + offs_m[:, None] * stride_ht + offs_k[None, :]
    b_ptrs = w_ptr + offs_n[None, :] * stride_wv + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, D, BLOCK_K):
        if k + BLOCK_K <= D:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=(k + offs_k)[None, :] < D, other=0.0)
            b = tl.load(b_ptrs, mask=(k + offs_k)[:, None] < D, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    o_ptrs = out_ptr + rows[:, None] * stride_ot + cols[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=(rows[:, None] < T) & (cols[None, :] < V))


def entry(hidden, weight):
    T, D = hidden.shape
    V = weight.shape[0]
    logits = torch.empty((T, V), device=hidden.device, dtype=hidden.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(T, BLOCK_M) * triton.cdiv(V, BLOCK_N),)
    lm_head_kernel[grid](hidden, weight, logits, T, V, D,
                         hidden.stride(0), weight.stride(0), logits.stride(0),
                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                         num_warps=8, num_stages=4)
    return logits


def reference(hidden, weight):
    return (hidden.float() @ weight.float().t()).to(hidden.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, D, V = case["T"], case["D"], case["V"]
    h = torch.randn(T, D, generator=g).to(torch.float16)
    w = (torch.randn(V, D, generator=g) / D ** 0.5).to(torch.float16)
    return h.to(device), w.to(device)


CASES = [
    {"T": 2048, "D": 4096, "V": 32000},
    {"T": 1024, "D": 5120, "V": 50257},
    {"T": 3000, "D": 2048, "V": 32768},
    {"T": 4096, "D": 2560, "V": 50304},
    {"T": 1536, "D": 4096, "V": 128256},
]
SMALL_CASES = [{"T": 40, "D": 96, "V": 300}, {"T": 129, "D": 64, "V": 130}]
TOLERANCES = {"float16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, D, V = case["T"], case["D"], case["V"]
    return 2 * (T * D + V * D + T * V)


def flops(case):
    return 2 * case["T"] * case["D"] * case["V"]


DTYPE_FLOPS = "fp16"
