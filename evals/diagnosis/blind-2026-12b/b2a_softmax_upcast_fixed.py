"""Row softmax of a bf16 [M, N] tensor computed in fp32; fixed: the kernel loads bf16, upcasts in registers and stores bf16 directly, so the tensor is read once and written once."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=m)


def entry(x):
    M, N = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(N)
    softmax_kernel[(M,)](x, y, N, x.stride(0), BLOCK_N=BLOCK_N, num_warps=8 if BLOCK_N >= 4096 else 4)
    return y


def reference(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(case["M"], case["N"], generator=g).to(torch.bfloat16)
    return (x.to(device),)


CASES = [{"M": 16384, "N": 4096}, {"M": 8192, "N": 8192}, {"M": 65536, "N": 1024},
         {"M": 24001, "N": 3000}, {"M": 32768, "N": 1000}]
SMALL_CASES = [{"M": 17, "N": 100}, {"M": 4, "N": 256}]
TOLERANCES = {"bfloat16": (1e-2, 2e-2)}


def bytes_moved(case):
    return 2 * 2 * case["M"] * case["N"]


def flops(case):
    return 5 * case["M"] * case["N"]
