import torch, triton, triton.language as tl


@triton.jit
def _embedding_bag_sum_kernel(weight_ptr, indices_ptr, offsets_ptr, out_ptr, D, stride_w, stride_o,
                              BLOCK_D: tl.constexpr):
    # out[bag] = sum of weight rows indexed by indices[offsets[bag]:offsets[bag+1]]
    bag = tl.program_id(0)
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i in range(start, end):
        idx = tl.load(indices_ptr + i)
        row = tl.load(weight_ptr + idx * stride_w + offs_d, mask=dmask, other=0.0)
        acc += row.to(tl.float32)
    tl.store(out_ptr + bag.to(tl.int64) * stride_o + offs_d, acc, mask=dmask)


def entry(weight, indices, offsets):
    # weight: [num_embeddings, D] fp32; indices: [nnz] int64; offsets: [num_bags + 1] int64
    num_bags = offsets.numel() - 1
    D = weight.shape[1]
    out = torch.empty((num_bags, D), device=weight.device, dtype=torch.float32)
    _embedding_bag_sum_kernel[(num_bags,)](
        weight, indices, offsets, out, D, weight.stride(0), out.stride(0),
        BLOCK_D=triton.next_power_of_2(D), num_warps=4)
    return out


def reference(weight, indices, offsets):
    return torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum", include_last_offset=True)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    nb, L, V, D = case["bags"], case["avg_len"], case["rows"], case["D"]
    weight = torch.randn((V, D), generator=g, dtype=torch.float32)
    lengths = torch.randint(max(1, L // 2), L + L // 2 + 1, (nb,), generator=g, dtype=torch.int64)
    offsets = torch.zeros(nb + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    indices = torch.randint(0, V, (int(offsets[-1]),), generator=g, dtype=torch.int64)
    return (weight.to(device), indices.to(device), offsets.to(device))


CASES = [
    {"bags": 16384, "avg_len": 64, "rows": 1_000_000, "D": 128},
    {"bags": 32768, "avg_len": 20, "rows": 500_000, "D": 64},
    {"bags": 8192, "avg_len": 100, "rows": 1_000_000, "D": 96},
    {"bags": 20000, "avg_len": 40, "rows": 800_000, "D": 160},
    {"bags": 4096, "avg_len": 250, "rows": 1_000_000, "D": 128},
    {"bags": 50000, "avg_len": 12, "rows": 300_000, "D": 256},
]
SMALL_CASES = [{"bags": 13, "avg_len": 5, "rows": 50, "D": 24}, {"bags": 7, "avg_len": 3, "rows": 20, "D": 64}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    nnz = case["bags"] * case["avg_len"]
    return nnz * (4 * case["D"] + 8) + case["bags"] * (4 * case["D"] + 8)


def flops(case):
    return case["bags"] * case["avg_len"] * case["D"]
