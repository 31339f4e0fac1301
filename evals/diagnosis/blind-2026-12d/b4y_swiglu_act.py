import torch, triton, triton.language as tl


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    _silu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y


def entry(gate_up):
    # gate_up is the fused [gate | up] projection output, shape (T, 2F)
    gate, up = gate_up.chunk(2, dim=-1)
    return silu(gate) * up


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
