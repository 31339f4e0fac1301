import torch, triton, triton.language as tl


@triton.jit
def expert_counts_kernel(ids_ptr, counts_ptr, n, E, BLOCK: tl.constexpr, E_POW2: tl.constexpr):
    # counts[e] += number of (token, slot) routed to expert e
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    e = tl.load(ids_ptr + offs, mask=mask, other=0)
    hist = tl.histogram(e, E_POW2, mask=mask)
    bins = tl.arange(0, E_POW2)
    tl.atomic_add(counts_ptr + bins, hist, mask=(bins < E) & (hist > 0), sem="relaxed")


def entry(topk_ids, num_experts):
    n = topk_ids.numel()
    counts = torch.zeros(num_experts, device=topk_ids.device, dtype=torch.int32)
    BLOCK = 4096
    expert_counts_kernel[(triton.cdiv(n, BLOCK),)](topk_ids, counts, n, num_experts, BLOCK=BLOCK,
                                                   E_POW2=triton.next_power_of_2(num_experts),
                                                   num_warps=8)
    return counts


def reference(topk_ids, num_experts):
    return torch.bincount(topk_ids.flatten().long(), minlength=num_experts).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, K, E = case["tokens"], case["topk"], case["experts"]
    # skewed router load: some experts are much more popular than others
    probs = torch.softmax(torch.randn(E, generator=g), dim=0)
    ids = torch.multinomial(probs, T * K, replacement=True, generator=g).to(torch.int32).view(T, K)
    return ids.to(device), E


CASES = [
    {"tokens": 1 << 20, "topk": 8, "experts": 64},
    {"tokens": 2_000_000, "topk": 2, "experts": 8},
    {"tokens": 700_000, "topk": 8, "experts": 256},
    {"tokens": 1_500_000, "topk": 4, "experts": 60},
    {"tokens": 900_001, "topk": 6, "experts": 160},
]
SMALL_CASES = [{"tokens": 1000, "topk": 2, "experts": 8}, {"tokens": 777, "topk": 6, "experts": 160}]


def bytes_moved(case):
    return 4 * case["tokens"] * case["topk"] + 4 * case["experts"]


def flops(case):
    return case["tokens"] * case["topk"]
