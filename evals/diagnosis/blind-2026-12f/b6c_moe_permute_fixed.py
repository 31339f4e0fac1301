import torch
import triton
import triton.language as tl


@triton.jit
def moe_permute_kernel(
    x_ptr, sorted_ids_ptr, out_ptr, H, topk,
    stride_x, stride_out,
    BLOCK: tl.constexpr,
):
    # out[i, :] = x[sorted_ids[i] // topk, :]  -- gathers token rows into expert-grouped order
    i = tl.program_id(0)
    pid_h = tl.program_id(1)
    src_token = tl.load(sorted_ids_ptr + i) // topk
    offs = pid_h * BLOCK + tl.arange(0, BLOCK)
    mask = offs < H
    row = tl.load(x_ptr + src_token.to(tl.int64) * stride_x + offs, mask=mask)
    tl.store(out_ptr + i.to(tl.int64) * stride_out + offs, row, mask=mask)


def entry(x, sorted_ids, topk):
    # x: [T, H] hidden states; sorted_ids: [T * topk] flat (token, slot) indices ordered by expert
    T, H = x.shape
    n = sorted_ids.numel()
    out = torch.empty((n, H), device=x.device, dtype=x.dtype)
    BLOCK = 2048
    grid = (n, triton.cdiv(H, BLOCK))
    moe_permute_kernel[grid](x, sorted_ids, out, H, topk, x.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


def reference(x, sorted_ids, topk):
    return x[sorted_ids.long() // topk]


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, topk, E = case["T"], case["H"], case["topk"], case["E"]
    x = torch.randn(T, H, generator=g, dtype=torch.float32).to(torch.bfloat16)
    scores = torch.rand(T, E, generator=g)
    expert_ids = torch.topk(scores, topk, dim=1).indices.flatten()
    sorted_ids = torch.argsort(expert_ids, stable=True).to(torch.int32)
    return x.to(device), sorted_ids.to(device), topk


CASES = [
    {"T": 8192, "H": 4096, "topk": 2, "E": 8},
    {"T": 4096, "H": 2048, "topk": 8, "E": 64},
    {"T": 3000, "H": 7168, "topk": 4, "E": 32},
    {"T": 6000, "H": 5120, "topk": 2, "E": 16},
    {"T": 16384, "H": 2880, "topk": 1, "E": 32},
    {"T": 2048, "H": 5120, "topk": 6, "E": 160},
]
SMALL_CASES = [{"T": 10, "H": 600, "topk": 2, "E": 4}, {"T": 7, "H": 300, "topk": 3, "E": 8}]


def bytes_moved(case):
    T, H, topk = case["T"], case["H"], case["topk"]
    return 2 * T * H + 2 * T * topk * H + 4 * T * topk


def flops(case):
    return 0
