import torch, triton, triton.language as tl

# MoE routing: number of (token, slot) assignments routed to each expert.
# Stage 1: each program counts a contiguous chunk of the flattened top-k ids into its own row.
# Stage 2: per-expert sum over the programs' rows.


@triton.jit
def count_chunk_kernel(ids_ptr, cnt_ptr, numel, num_experts, chunk):
    pid = tl.program_id(0)
    start = pid * chunk
    row = cnt_ptr + pid * num_experts
    for i in range(chunk):
        if start + i < numel:
            e = tl.load(ids_ptr + start + i)
            c = tl.load(row + e)
            tl.store(row + e, c + 1)


@triton.jit
def sum_rows_kernel(cnt_ptr, out_ptr, num_rows, num_experts, ROWS_PAD: tl.constexpr):
    e = tl.program_id(0)
    r = tl.arange(0, ROWS_PAD)
    v = tl.load(cnt_ptr + r * num_experts + e, mask=r < num_rows, other=0)
    tl.store(out_ptr + e, tl.sum(v, axis=0))


def entry(topk_ids, num_experts):
    numel = topk_ids.numel()
    P = num_experts
    chunk = triton.cdiv(numel, P)
    partial = torch.zeros((P, num_experts), device=topk_ids.device, dtype=torch.int32)
    count_chunk_kernel[(P,)](topk_ids, partial, numel, num_experts, chunk)
    counts = torch.empty((num_experts,), device=topk_ids.device, dtype=torch.int32)
    sum_rows_kernel[(num_experts,)](partial, counts, P, num_experts, ROWS_PAD=triton.next_power_of_2(P))
    return counts


def reference(topk_ids, num_experts):
    return torch.bincount(topk_ids.flatten().long(), minlength=num_experts).to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, K, E = case["T"], case["K"], case["E"]
    logits = torch.randn(T, E, generator=g, dtype=torch.float32)
    ids = logits.topk(K, dim=-1).indices.to(torch.int32).contiguous()
    return ids.to(device), E


CASES = [
    {"T": 16384, "K": 8, "E": 64},
    {"T": 8192, "K": 2, "E": 8},
    {"T": 12000, "K": 6, "E": 160},
    {"T": 4096, "K": 8, "E": 256},
    {"T": 30000, "K": 4, "E": 60},
    {"T": 65536, "K": 2, "E": 16},
]
SMALL_CASES = [{"T": 100, "K": 2, "E": 8}, {"T": 77, "K": 6, "E": 12}]


def bytes_moved(case):
    return case["T"] * case["K"] * 4 + case["E"] * 4


def flops(case):
    return case["T"] * case["K"]
