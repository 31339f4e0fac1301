"""Weight gradient of a per-feature scale, dw[n] = sum_m dy[m, n] * x[m, n] (bf16 in, fp32 out); planted: every program merges its partial row into dw under one global spin lock, serializing all programs."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_grad_kernel(x_ptr, dy_ptr, dw_ptr, lock_ptr, M, N, stride,
                      ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(ROWS):
        row = pid * ROWS + r
        m = cmask & (row < M)
        x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        acc += x * dy
    # accumulate into the shared dw buffer under a lock
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    cur = tl.load(dw_ptr + cols, mask=cmask, other=0.0)
    tl.store(dw_ptr + cols, cur + acc, mask=cmask)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def entry(x, dy):
    M, N = x.shape
    dw = torch.zeros(N, device=x.device, dtype=torch.float32)
    lock = torch.zeros(1, device=x.device, dtype=torch.int32)
    ROWS = 4
    BLOCK_N = triton.next_power_of_2(N)
    scale_grad_kernel[(triton.cdiv(M, ROWS),)](x, dy, dw, lock, M, N, x.stride(0),
                                              ROWS=ROWS, BLOCK_N=BLOCK_N, num_warps=8)
    return dw


def reference(x, dy):
    return (x.float() * dy.float()).sum(0)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, N = case["M"], case["N"]
    x = torch.randn(M, N, generator=g).to(torch.bfloat16)
    dy = torch.randn(M, N, generator=g).to(torch.bfloat16)
    return (x.to(device), dy.to(device))


CASES = [{"M": 32768, "N": 4096}, {"M": 65536, "N": 1024}, {"M": 50000, "N": 2048},
         {"M": 24577, "N": 3000}, {"M": 131072, "N": 768}]
SMALL_CASES = [{"M": 37, "N": 100}, {"M": 16, "N": 64}]
TOLERANCES = {"float32": (1e-2, 1e-3)}


def bytes_moved(case):
    return 2 * 2 * case["M"] * case["N"] + 4 * case["N"]


def flops(case):
    return 2 * case["M"] * case["N"]
