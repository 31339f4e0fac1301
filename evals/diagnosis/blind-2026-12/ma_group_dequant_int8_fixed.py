"""Dequantize a flat int8 buffer with one fp32 scale per 256-element group into bf16 (ZeRO++/FSDP-style quantized weight all-gather). Planted: every block is masked with offs < n, and n is odd, so the mask alignment is 1 and all loads/stores split into 1- and 2-byte accesses."""
import torch
import triton
import triton.language as tl


@triton.jit
def _group_dequant_kernel(
    q_ptr, scale_ptr, out_ptr, n_elements, n_groups,
    GROUP: tl.constexpr, GROUPS_PER_BLOCK: tl.constexpr,
):
    # one program = GROUPS_PER_BLOCK consecutive quantization groups, viewed as a [groups, GROUP] tile
    pid = tl.program_id(0)
    g = pid * GROUPS_PER_BLOCK + tl.arange(0, GROUPS_PER_BLOCK)
    offs = g[:, None] * GROUP + tl.arange(0, GROUP)[None, :]
    if (pid + 1) * (GROUPS_PER_BLOCK * GROUP) <= n_elements:
        # full block (all but the last program): no mask, so loads/stores stay 16-byte vectors
        s = tl.load(scale_ptr + g)
        q = tl.load(q_ptr + offs)
        y = q.to(tl.float32) * s[:, None]
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty))
    else:
        # ragged tail block
        mask = offs < n_elements
        s = tl.load(scale_ptr + g, mask=g < n_groups, other=0.0)
        q = tl.load(q_ptr + offs, mask=mask, other=0)
        y = q.to(tl.float32) * s[:, None]
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def entry(q, scales):
    n = q.numel()
    n_groups = scales.numel()
    out = torch.empty(n, device=q.device, dtype=torch.bfloat16)
    GROUPS_PER_BLOCK = 16
    grid = (triton.cdiv(n_groups, GROUPS_PER_BLOCK),)
    _group_dequant_kernel[grid](q, scales, out, n, n_groups, GROUP=256, GROUPS_PER_BLOCK=GROUPS_PER_BLOCK,
                                num_warps=4)
    return out


def reference(q, scales):
    n = q.numel()
    s = scales.repeat_interleave(256)[:n]
    return (q.float() * s).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    n = case["n"]
    q = torch.randint(-127, 128, (n,), generator=g, dtype=torch.int8)
    scales = torch.rand((n + 255) // 256, generator=g) * 0.02 + 1e-3
    return q.to(device), scales.to(device)


CASES = [
    {"n": 201_326_593},
    {"n": 67_108_865},
    {"n": 124_439_809},
    {"n": 400_000_001},
]

SMALL_CASES = [
    {"n": 1001},
    {"n": 12_289},
]

TOLERANCES = {"bfloat16": (1e-3, 1e-2)}


def bytes_moved(case):
    n = case["n"]
    return n * 3 + ((n + 255) // 256) * 4


def flops(case):
    return case["n"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
