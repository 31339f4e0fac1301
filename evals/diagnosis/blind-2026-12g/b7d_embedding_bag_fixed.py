import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_bag_sum_kernel(
    weight_ptr, indices_ptr, offsets_ptr, out_ptr, D,
    BLOCK_D: tl.constexpr, BLOCK_R: tl.constexpr,
):
    # out[bag] = sum of weight[indices[j]] for j in [offsets[bag], offsets[bag + 1])
    bag = tl.program_id(0)
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < D
    offs_r = tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for j0 in range(start, end, BLOCK_R):
        js = j0 + offs_r
        r_mask = js < end
        idx = tl.load(indices_ptr + js, mask=r_mask, other=0)
        rows = tl.load(weight_ptr + idx[:, None] * D + offs_d[None, :],
                       mask=r_mask[:, None] & d_mask[None, :], other=0.0)
        acc += tl.sum(rows.to(tl.float32), axis=0)
    tl.store(out_ptr + bag * D + offs_d, acc.to(out_ptr.dtype.element_ty), mask=d_mask)


def entry(weight, indices, offsets):
    num_bags = offsets.numel() - 1
    D = weight.shape[1]
    out = torch.empty((num_bags, D), device=weight.device, dtype=weight.dtype)
    BLOCK_D = triton.next_power_of_2(D)
    _embedding_bag_sum_kernel[(num_bags,)](
        weight, indices, offsets, out, D,
        BLOCK_D=BLOCK_D, BLOCK_R=16, num_warps=max(1, BLOCK_D // 128),
    )
    return out


def reference(weight, indices, offsets):
    return torch.nn.functional.embedding_bag(indices, weight, offsets, mode="sum", include_last_offset=True)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    rows, D, bags, avg = case["rows"], case["D"], case["bags"], case["avg"]
    weight = torch.randn((rows, D), generator=g, dtype=torch.float32)
    lengths = torch.randint(1, 2 * avg, (bags,), generator=g)
    offsets = torch.zeros(bags + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    indices = torch.randint(0, rows, (int(offsets[-1]),), generator=g, dtype=torch.int64)
    return (weight.to(device), indices.to(device), offsets.to(device))


CASES = [
    {"rows": 500000, "D": 128, "bags": 32768, "avg": 48},
    {"rows": 600000, "D": 192, "bags": 65536, "avg": 40},
    {"rows": 300000, "D": 256, "bags": 16384, "avg": 64},
    {"rows": 750000, "D": 96, "bags": 50000, "avg": 30},
    {"rows": 400000, "D": 160, "bags": 20000, "avg": 80},
    {"rows": 600000, "D": 128, "bags": 100000, "avg": 20},
]
SMALL_CASES = [
    {"rows": 300, "D": 32, "bags": 20, "avg": 6},
    {"rows": 100, "D": 48, "bags": 9, "avg": 25},
]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    n = case["bags"] * case["avg"]
    return n * (case["D"] * 4 + 8) + case["bags"] * (case["D"] * 4 + 8)


def flops(case):
    return case["bags"] * case["avg"] * case["D"]
