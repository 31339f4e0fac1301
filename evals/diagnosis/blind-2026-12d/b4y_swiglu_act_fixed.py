import torch, triton, triton.language as tl


@triton.jit
def _swiglu_kernel(h_ptr, y_ptr, F, stride_h, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < F
    g = tl.load(h_ptr + row * stride_h + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(h_ptr + row * stride_h + F + cols, mask=mask, other=0.0).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def entry(gate_up):
    # gate_up is the fused [gate | up] projection output, shape (T, 2F)
    T, F2 = gate_up.shape
    F = F2 // 2
    y = torch.empty((T, F), device=gate_up.device, dtype=gate_up.dtype)
    BLOCK = 1024
    _swiglu_kernel[(T, triton.cdiv(F, BLOCK))](gate_up, y, F, gate_up.stride(0), y.stride(0), BLOCK=BLOCK)
    return y


def reference(gate_up):
    gate, up = gate_up.float().chunk(2, dim=-1)
    return (torch.nn.functional.silu(gate) * up).to(gate_up.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(case["T"], 2 * case["F"], generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (h.to(device),)


CASES = [
    {"T": 4096, "F": 8192},
    {"T": 2048, "F": 14336},
    {"T": 3000, "F": 11008},
    {"T": 6144, "F": 3584},
    {"T": 1500, "F": 13824},
    {"T": 8192, "F": 2816},
]
SMALL_CASES = [{"T": 7, "F": 384}, {"T": 4, "F": 1000}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    return 3 * case["T"] * case["F"] * 2


def flops(case):
    return 5 * case["T"] * case["F"]
