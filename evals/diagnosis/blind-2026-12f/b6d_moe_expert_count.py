import torch
import triton
import triton.language as tl


@triton.jit
def _expert_count_kernel(topk_ids_ptr, counts_ptr, n_assignments, BLOCK: tl.constexpr):
    # Number of (token, slot) assignments routed to each expert.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_assignments
    expert = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    ones = tl.full([BLOCK], 1, tl.int32)
    tl.atomic_add(counts_ptr + expert, ones, mask=mask, sem="relaxed")


def entry(topk_ids, num_experts):
    ids = topk_ids.reshape(-1)
    n = ids.numel()
    counts = torch.zeros(num_experts, dtype=torch.int32, device=topk_ids.device)
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    _expert_count_kernel[grid](ids, counts, n, BLOCK=BLOCK, num_warps=4)
    return counts


def reference(topk_ids, num_experts):
    return torch.bincount(topk_ids.reshape(-1).long(), minlength=num_experts).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    T, k, E = case["tokens"], case["topk"], case["experts"]
    topk_ids = torch.randint(0, E, (T, k), generator=g, dtype=torch.int32)
    return (topk_ids.to(device), E)


CASES = [
    {"tokens": 65536, "topk": 8, "experts": 64},
    {"tokens": 131072, "topk": 2, "experts": 8},
    {"tokens": 100000, "topk": 6, "experts": 160},
    {"tokens": 250000, "topk": 4, "experts": 60},
    {"tokens": 262144, "topk": 8, "experts": 128},
    {"tokens": 393215, "topk": 2, "experts": 16},
]
SMALL_CASES = [
    {"tokens": 700, "topk": 2, "experts": 8},
    {"tokens": 517, "topk": 6, "experts": 60},
]
TOLERANCES = {"int32": (0, 0)}


def bytes_moved(case):
    return case["tokens"] * case["topk"] * 4 + case["experts"] * 4


def flops(case):
    return case["tokens"] * case["topk"]
