import torch
import triton
import triton.language as tl


@triton.jit
def causal_pv_kernel(p_ptr, v_ptr, o_ptr, T, stride_pb, stride_vb, stride_ob,
                     HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # o[b] = tril(p[b]) @ v[b]: causally masked probabilities times values
    pid_m = tl.program_id(0)
    b = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_D)
    p_base = p_ptr + b * stride_pb
    v_base = v_ptr + b * stride_vb
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, T)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        causal = (offs_m[:, None] < T) & (offs_n[None, :] <= offs_m[:, None])
        p = tl.load(p_base + offs_m[:, None] * T + offs_n[None, :], mask=causal, other=0.0)
        v = tl.load(v_base + offs_n[:, None] * HEAD_D + offs_d[None, :],
                    mask=offs_n[:, None] < T, other=0.0)
        acc += tl.dot(p, v)
    o = o_ptr + b * stride_ob + offs_m[:, None] * HEAD_D + offs_d[None, :]
    tl.store(o, acc.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < T)


def entry(p, v):
    B, T, D = v.shape
    o = torch.empty_like(v)
    BLOCK_M, BLOCK_N = 128, 128
    grid = (triton.cdiv(T, BLOCK_M), B)
    causal_pv_kernel[grid](p, v, o, T, p.stride(0), v.stride(0), o.stride(0),
                           HEAD_D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
    return o


def reference(p, v):
    return (torch.tril(p.float()) @ v.float()).to(v.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, T, D = case["b"], case["t"], case["d"]
    p = torch.randn(B, T, T, generator=g) / T ** 0.5
    v = torch.randn(B, T, D, generator=g)
    return p.to(torch.float16).to(device), v.to(torch.float16).to(device)


CASES = [
    {"b": 32, "t": 2048, "d": 128},
    {"b": 16, "t": 3072, "d": 128},
    {"b": 64, "t": 1536, "d": 128},
    {"b": 24, "t": 2560, "d": 128},
    {"b": 8, "t": 4000, "d": 128},
    {"b": 96, "t": 1200, "d": 128},
]
SMALL_CASES = [{"b": 2, "t": 80, "d": 32}, {"b": 1, "t": 144, "d": 64}]
TOLERANCES = {"float16": (2e-2, 1e-2)}


def bytes_moved(case):
    B, T, D = case["b"], case["t"], case["d"]
    return 2 * B * T * (T + 1) // 2 + 2 * 2 * B * T * D


def flops(case):
    B, T, D = case["b"], case["t"], case["d"]
    return 2 * B * D * T * (T + 1) // 2


DTYPE_FLOPS = "fp16"
