import torch, triton, triton.language as tl


@triton.jit
def _expert_counts_kernel(topk_ids_ptr, counts_ptr, numel, BLOCK: tl.constexpr):
    # counts[e] += number of (token, slot) pairs routed to expert e
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    ids = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    ones = tl.full([BLOCK], 1, dtype=tl.int32)
    tl.atomic_add(counts_ptr + ids, ones, mask=mask, sem="relaxed")


def entry(topk_ids, num_experts):
    # topk_ids: [T, K] int32 expert ids chosen by the router -> tokens per expert [E] int32
    ids = topk_ids.reshape(-1)
    counts = torch.zeros((num_experts,), device=topk_ids.device, dtype=torch.int32)
    numel = ids.numel()
    BLOCK = 1024
    _expert_counts_kernel[(triton.cdiv(numel, BLOCK),)](ids, counts, numel, BLOCK=BLOCK, num_warps=4)
    return counts


def reference(topk_ids, num_experts):
    return torch.bincount(topk_ids.reshape(-1).long(), minlength=num_experts).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, E, K = case["T"], case["E"], case["K"]
    router_logits = torch.randn((T, E), generator=g, dtype=torch.float32)
    topk_ids = torch.topk(router_logits, K, dim=-1).indices.to(torch.int32)
    return (topk_ids.to(device), E)


CASES = [
    {"T": 1048576, "E": 8, "K": 2},
    {"T": 524288, "E": 64, "K": 8},
    {"T": 393216, "E": 256, "K": 8},
    {"T": 600000, "E": 160, "K": 6},
    {"T": 1000000, "E": 60, "K": 4},
    {"T": 2000000, "E": 16, "K": 1},
]
SMALL_CASES = [{"T": 1000, "E": 8, "K": 2}, {"T": 517, "E": 60, "K": 4}]


def bytes_moved(case):
    return 4 * case["T"] * case["K"] + 4 * case["E"]


def flops(case):
    return case["T"] * case["K"]
