import torch, triton, triton.language as tl


@triton.jit
def topk_router_kernel(logits_ptr, weights_ptr, ids_ptr, E,
                       BLOCK_E: tl.constexpr, TOP_K: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    # softmax over experts, keep the TOP_K largest, renormalize their probabilities
    t = tl.program_id(0)
    offs_e = tl.arange(0, BLOCK_E)
    mask_e = offs_e < E
    x = tl.load(logits_ptr + t * E + offs_e, mask=mask_e, other=float("-inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)
    offs_k = tl.arange(0, BLOCK_K)
    top_w = tl.zeros((BLOCK_K,), dtype=tl.float32)
    top_i = tl.zeros((BLOCK_K,), dtype=tl.int32)
    for i in tl.static_range(TOP_K):
        v = tl.max(x, axis=0)
        idx = tl.argmax(x, axis=0)
        top_w = tl.where(offs_k == i, tl.exp(v - row_max), top_w)
        top_i = tl.where(offs_k == i, idx.to(tl.int32), top_i)
        x = tl.where(offs_e == idx, float("-inf"), x)
    top_w = top_w / tl.sum(top_w, axis=0)
    mask_k = offs_k < TOP_K
    tl.store(weights_ptr + t * TOP_K + offs_k, top_w, mask=mask_k)
    tl.store(ids_ptr + t * TOP_K + offs_k, top_i, mask=mask_k)


def entry(logits, top_k):
    T, E = logits.shape
    weights = torch.empty((T, top_k), device=logits.device, dtype=torch.float32)
    ids = torch.empty((T, top_k), device=logits.device, dtype=torch.int32)
    topk_router_kernel[(T,)](logits, weights, ids, E,
                             BLOCK_E=triton.next_power_of_2(E), TOP_K=top_k,
                             BLOCK_K=triton.next_power_of_2(top_k), num_warps=4)
    return weights, ids


def reference(logits, top_k):
    probs = torch.softmax(logits.float(), dim=-1)
    w, i = torch.topk(probs, top_k, dim=-1)
    w = w / w.sum(dim=-1, keepdim=True)
    return w, i.to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(case["T"], case["E"], generator=g, dtype=torch.float32)
    return (logits.to(device), case["K"])


CASES = [
    {"T": 131072, "E": 64, "K": 8},
    {"T": 65536, "E": 128, "K": 8},
    {"T": 49152, "E": 256, "K": 8},
    {"T": 98304, "E": 160, "K": 6},
    {"T": 100000, "E": 60, "K": 4},
]
SMALL_CASES = [{"T": 40, "E": 64, "K": 8}, {"T": 33, "E": 60, "K": 4}, {"T": 17, "E": 160, "K": 6}]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    return case["T"] * case["E"] * 4 + case["T"] * case["K"] * 8


def flops(case):
    return case["T"] * case["E"] * (3 + 2 * case["K"])
