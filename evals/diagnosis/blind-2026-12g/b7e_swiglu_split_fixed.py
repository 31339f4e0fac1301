import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(x_ptr, out_ptr, I, stride_x, stride_out, BLOCK: tl.constexpr):
    # out = silu(gate) * up, with gate = x[:, :I] and up = x[:, I:]
    row = tl.program_id(0)
    pid = tl.program_id(1)
    cols = pid * BLOCK + tl.arange(0, BLOCK)
    mask = cols < I
    x_row = x_ptr + row * stride_x
    g = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_row + I + cols, mask=mask, other=0.0).to(tl.float32)
    y = g * tl.sigmoid(g) * u
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def entry(gate_up):
    # gate_up: [T, 2 * I] output of the fused gate/up projection
    T, W = gate_up.shape
    I = W // 2
    out = torch.empty((T, I), device=gate_up.device, dtype=gate_up.dtype)
    BLOCK = 1024
    swiglu_kernel[(T, triton.cdiv(I, BLOCK))](
        gate_up, out, I, gate_up.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


def reference(gate_up):
    gate, up = gate_up.float().chunk(2, dim=-1)
    return (F.silu(gate) * up).to(gate_up.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, I = case["T"], case["I"]
    x = torch.randn(T, 2 * I, generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (x.to(device),)


CASES = [
    {"T": 4096, "I": 11008},
    {"T": 2000, "I": 14336},
    {"T": 8192, "I": 2816},
    {"T": 3000, "I": 8192},
    {"T": 16384, "I": 1408},
    {"T": 1234, "I": 13824},
]
SMALL_CASES = [
    {"T": 7, "I": 96},
    {"T": 13, "I": 48},
]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    T, I = case["T"], case["I"]
    return T * 2 * I * 2 + T * I * 2


def flops(case):
    return 5 * case["T"] * case["I"]
