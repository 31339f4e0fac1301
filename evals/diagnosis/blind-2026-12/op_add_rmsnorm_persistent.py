"""Fused residual-add + RMSNorm over [tokens, hidden] rows: out = rmsnorm(x + residual) * weight. Planted: persistent launch with one 4-warp program per SM walking rows serially, far too little memory parallelism."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm_kernel(x_ptr, res_ptr, w_ptr, out_ptr, M, N, eps,
                        stride_x, stride_r, stride_o,
                        BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    # weight is loaded once and kept in registers for every row this program handles
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    for row in range(pid, M, nprog):
        x = tl.load(x_ptr + row * stride_x + cols, mask=cmask, other=0.0).to(tl.float32)
        r = tl.load(res_ptr + row * stride_r + cols, mask=cmask, other=0.0).to(tl.float32)
        h = x + r
        rstd = tl.rsqrt(tl.sum(h * h, axis=0) / N + eps)
        tl.store(out_ptr + row * stride_o + cols, (h * rstd * w).to(out_ptr.dtype.element_ty), mask=cmask)


def entry(x, residual, weight):
    M, N = x.shape
    assert x.stride(1) == 1 and residual.stride(1) == 1
    out = torch.empty_like(x)
    n_sm = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4
    grid = (min(M, n_sm),)
    _add_rmsnorm_kernel[grid](
        x, residual, weight, out, M, N, 1e-6,
        x.stride(0), residual.stride(0), out.stride(0),
        BLOCK_N=triton.next_power_of_2(N), num_warps=4,
    )
    return out


def reference(x, residual, weight):
    h = x.float() + residual.float()
    rstd = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (h * rstd * weight.float()).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    x = torch.randn(M, N, generator=g).to(dtype)
    residual = (2.0 * torch.randn(M, N, generator=g)).to(dtype)
    weight = (1.0 + 0.1 * torch.randn(N, generator=g)).to(dtype)
    return x.to(device), residual.to(device), weight.to(device)


CASES = [
    {"M": 65536, "N": 2048, "dtype": "bfloat16"},
    {"M": 32768, "N": 4096, "dtype": "bfloat16"},
    {"M": 100003, "N": 1024, "dtype": "float16"},
    {"M": 40000, "N": 2560, "dtype": "bfloat16"},
]
SMALL_CASES = [
    {"M": 13, "N": 96, "dtype": "bfloat16"},
    {"M": 37, "N": 300, "dtype": "float16"},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2), "float16": (2e-3, 2e-3)}


def bytes_moved(case):
    M, N = case["M"], case["N"]
    return 2 * (3 * M * N + N)


def flops(case):
    return 4 * case["M"] * case["N"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
