import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # out = silu(gate) * up
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = g * tl.sigmoid(g) * u
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def entry(gate_up):
    # gate_up: [T, 2 * I] output of the fused gate/up projection
    gate, up = gate_up.chunk(2, dim=-1)
    gate = gate.contiguous()
    up = up.contiguous()
    out = torch.empty_like(gate)
    n = gate.numel()
    BLOCK = 1024
    swiglu_kernel[(triton.cdiv(n, BLOCK),)](gate, up, out, n, BLOCK=BLOCK)
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
