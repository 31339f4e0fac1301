import torch
import triton
import triton.language as tl


# EmbeddingBag(mode="sum") forward for recommendation models: bags are given in
# CSR form (indices + offsets with a trailing end offset); each bag's output row
# is the fp32 sum of the embedding rows it references.
@triton.jit
def _embedding_bag_sum_kernel(weight_ptr, indices_ptr, offsets_ptr, out_ptr,
                              D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1)

    cols = tl.arange(0, BLOCK_D)
    cmask = cols < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i in range(start, end, BLOCK_L):
        pos = i + tl.arange(0, BLOCK_L)
        pmask = pos < end
        rows = tl.load(indices_ptr + pos, mask=pmask, other=0)
        vals = tl.load(weight_ptr + rows[:, None] * D + cols[None, :],
                       mask=pmask[:, None] & cmask[None, :], other=0.0)
        acc += tl.sum(vals.to(tl.float32), axis=0)

    tl.store(out_ptr + bag * D + cols, acc, mask=cmask)


def entry(weight, indices, offsets):
    V, D = weight.shape
    n_bags = offsets.numel() - 1
    out = torch.empty((n_bags, D), dtype=torch.float32, device=weight.device)
    _embedding_bag_sum_kernel[(n_bags,)](weight, indices, offsets, out, D,
                                         BLOCK_L=32, BLOCK_D=triton.next_power_of_2(D))
    return out


def reference(weight, indices, offsets):
    n_bags = offsets.numel() - 1
    lengths = (offsets[1:] - offsets[:-1]).long()
    bag_id = torch.repeat_interleave(torch.arange(n_bags, device=weight.device), lengths)
    rows = weight[indices.long()].float()
    out = torch.zeros((n_bags, weight.shape[1]), dtype=torch.float32, device=weight.device)
    out.index_add_(0, bag_id, rows)
    return out


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    n_bags, avg, V, D = case["bags"], case["avg_len"], case["V"], case["D"]
    weight = torch.randn((V, D), generator=g, dtype=torch.float32).to(torch.bfloat16)
    lengths = torch.randint(1, 2 * avg, (n_bags,), generator=g)
    offsets = torch.zeros(n_bags + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    n_idx = int(offsets[-1])
    indices = torch.randint(0, V, (n_idx,), generator=g, dtype=torch.int64)
    return weight.to(device), indices.to(device), offsets.to(device)


CASES = [
    {"bags": 16384, "avg_len": 64, "V": 1000000, "D": 64},
    {"bags": 32768, "avg_len": 40, "V": 2000000, "D": 32},
    {"bags": 8192, "avg_len": 150, "V": 1000000, "D": 64},
    {"bags": 20000, "avg_len": 50, "V": 500000, "D": 48},
    {"bags": 12345, "avg_len": 100, "V": 750000, "D": 64},
    {"bags": 50000, "avg_len": 30, "V": 3000000, "D": 32},
]

SMALL_CASES = [
    {"bags": 9, "avg_len": 6, "V": 50, "D": 64},
    {"bags": 7, "avg_len": 4, "V": 30, "D": 48},
]

TOLERANCES = {"float32": (1e-4, 1e-4)}


def _n_idx(case):
    return case["bags"] * case["avg_len"]


def bytes_moved(case):
    n, D = _n_idx(case), case["D"]
    return n * (8 + D * 2) + (case["bags"] + 1) * 8 + case["bags"] * D * 4


def flops(case):
    return _n_idx(case) * case["D"]
