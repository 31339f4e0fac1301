import torch
import triton
import triton.language as tl


@triton.jit
def _row_cumsum_kernel(p_ptr, out_ptr, V, stride_p, stride_o, BLOCK: tl.constexpr):
    # inclusive prefix sum of each row of sorted probabilities (nucleus sampling CDF)
    row = tl.program_id(0)
    p_row = p_ptr + row * stride_p
    o_row = out_ptr + row * stride_o
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < V
        p = tl.load(p_row + offs, mask=mask, other=0.0).to(tl.float32)
        c = tl.cumsum(p, axis=0) + carry
        tl.store(o_row + offs, c, mask=mask)
        carry += tl.sum(p, axis=0)


def entry(sorted_probs):
    B, V = sorted_probs.shape
    out = torch.empty((B, V), device=sorted_probs.device, dtype=torch.float32)
    _row_cumsum_kernel[(B,)](sorted_probs, out, V, sorted_probs.stride(0), out.stride(0), BLOCK=2048, num_warps=4)
    return out


def reference(sorted_probs):
    return torch.cumsum(sorted_probs.double(), dim=-1).float()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, V = case["B"], case["V"]
    logits = torch.randn((B, V), generator=g, dtype=torch.float32) * 2.0
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    return (sorted_probs.contiguous().to(device),)


CASES = [
    {"B": 64, "V": 256000},
    {"B": 48, "V": 152064},
    {"B": 128, "V": 128256},
    {"B": 48, "V": 262144},
    {"B": 96, "V": 100352},
    {"B": 80, "V": 201088},
]
SMALL_CASES = [
    {"B": 3, "V": 5000},
    {"B": 2, "V": 2048},
]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    return 2 * 4 * case["B"] * case["V"]


def flops(case):
    return case["B"] * case["V"]
