import torch
import triton
import triton.language as tl


@triton.jit
def lm_head_kernel(
    h_ptr, w_ptr, out_ptr,
    T, V, D,
    stride_ht, stride_wv, stride_ot,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # logits[t, v] = <h[t, :], w[v, :]> accumulated in fp32, written as fp32
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(T, BLOCK_M)
    num_pid_n = tl.cdiv(V, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < T
    n_mask = offs_n < V
    h_ptrs = h_ptr + offs_m[:, None] * stride_ht + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[None, :] * stride_wv + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, D, BLOCK_K):
        k_mask = (k + offs_k) < D
        a = tl.load(h_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=n_mask[None, :] & k_mask[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        h_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    out_ptrs = out_ptr + offs_m[:, None] * stride_ot + offs_n[None, :]
    tl.store(out_ptrs, acc, mask=m_mask[:, None] & n_mask[None, :])


def entry(hidden, w_vocab):
    # hidden: [T, D] final hidden states, w_vocab: [V, D] output embedding
    T, D = hidden.shape
    V = w_vocab.shape[0]
    logits = torch.empty((T, V), device=hidden.device, dtype=torch.float32)
    grid = (triton.cdiv(T, 128) * triton.cdiv(V, 256),)
    lm_head_kernel[grid](
        hidden, w_vocab, logits, T, V, D,
        hidden.stride(0), w_vocab.stride(0), logits.stride(0),
        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return logits


def reference(hidden, w_vocab):
    return hidden.float() @ w_vocab.float().t()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, D, V = case["T"], case["D"], case["V"]
    hidden = torch.randn(T, D, generator=g, dtype=torch.float32).to(torch.float16)
    w_vocab = (torch.randn(V, D, generator=g, dtype=torch.float32) / (D ** 0.5)).to(torch.float16)
    return hidden.to(device), w_vocab.to(device)


CASES = [
    {"T": 2048, "D": 4096, "V": 32000},
    {"T": 1024, "D": 2048, "V": 50257},
    {"T": 4096, "D": 2560, "V": 32064},
    {"T": 1500, "D": 3072, "V": 49152},
    {"T": 3000, "D": 1024, "V": 30522},
    {"T": 512, "D": 4096, "V": 128256},
]
SMALL_CASES = [{"T": 40, "D": 96, "V": 200}, {"T": 270, "D": 64, "V": 33}]
TOLERANCES = {"float32": (1e-2, 1e-2)}


def bytes_moved(case):
    T, D, V = case["T"], case["D"], case["V"]
    return 2 * (T * D + V * D) + 4 * T * V


def flops(case):
    T, D, V = case["T"], case["D"], case["V"]
    return 2 * T * V * D


DTYPE_FLOPS = "fp16"
