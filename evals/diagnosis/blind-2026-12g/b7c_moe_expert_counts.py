import torch, triton, triton.language as tl


# Tokens routed to each expert: counts[e] = #{(t, k) : topk_ids[t, k] == e}
@triton.jit
def _expert_count_kernel(ids_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    e = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + e, 1, mask=mask)


def entry(topk_ids, num_experts):
    ids = topk_ids.reshape(-1)
    n = ids.numel()
    counts = torch.zeros(num_experts, device=topk_ids.device, dtype=torch.int32)
    BLOCK = 4096
    grid = (triton.cdiv(n, BLOCK),)
    _expert_count_kernel[grid](ids, counts, n, BLOCK=BLOCK, num_warps=4)
    return counts


def reference(topk_ids, num_experts):
    return torch.bincount(topk_ids.reshape(-1).long(), minlength=num_experts).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    T, k, E = case["T"], case["topk"], case["E"]
    # skewed expert popularity; k assignments per token
    probs = torch.softmax(0.5 * torch.randn(E, generator=g), 0)
    first = torch.multinomial(probs, T, replacement=True, generator=g)
    step = torch.randint(1, E, (T, 1), generator=g)
    ids = ((first[:, None] + step * torch.arange(k)[None, :]) % E).to(torch.int32)
    return ids.to(device), E


CASES = [
    {"T": 2097152, "topk": 8, "E": 64},
    {"T": 3000000, "topk": 6, "E": 160},
    {"T": 2000003, "topk": 8, "E": 128},
    {"T": 8388608, "topk": 2, "E": 8},
    {"T": 4000000, "topk": 4, "E": 60},
]
SMALL_CASES = [{"T": 1000, "topk": 4, "E": 60}, {"T": 777, "topk": 2, "E": 8}]


def bytes_moved(case):
    return 4 * case["T"] * case["topk"] + 4 * case["E"]


def flops(case):
    return 0
