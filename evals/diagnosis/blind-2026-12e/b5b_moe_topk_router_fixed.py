import torch, triton, triton.language as tl


@triton.jit
def topk_router_kernel(logits_ptr, weights_ptr, ids_ptr, T, E,
                       BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, TOP_K: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    # softmax over experts, keep the TOP_K largest, renormalize their probabilities
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, BLOCK_E)
    mask_t = offs_t < T
    mask = mask_t[:, None] & (offs_e[None, :] < E)
    x = tl.load(logits_ptr + offs_t[:, None] * E + offs_e[None, :], mask=mask,
                other=float("-inf")).to(tl.float32)
    row_max = tl.max(x, axis=1)
    offs_k = tl.arange(0, BLOCK_K)
    top_w = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    top_i = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int32)
    for i in tl.static_range(TOP_K):
        v = tl.max(x, axis=1)
        idx = tl.argmax(x, axis=1)
        sel = offs_k[None, :] == i
        top_w = tl.where(sel, tl.exp(v - row_max)[:, None], top_w)
        top_i = tl.where(sel, idx.to(tl.int32)[:, None], top_i)
        x = tl.where(offs_e[None, :] == idx[:, None], float("-inf"), x)
    top_w = top_w / tl.sum(top_w, axis=1)[:, None]
    out_offs = offs_t[:, None] * TOP_K + offs_k[None, :]
    out_mask = mask_t[:, None] & (offs_k[None, :] < TOP_K)
    tl.store(weights_ptr + out_offs, top_w, mask=out_mask)
    tl.store(ids_ptr + out_offs, top_i, mask=out_mask)


def entry(logits, top_k):
    T, E = logits.shape
    weights = torch.empty((T, top_k), device=logits.device, dtype=torch.float32)
    ids = torch.empty((T, top_k), device=logits.device, dtype=torch.int32)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_T = max(1, 4096 // BLOCK_E)
    topk_router_kernel[(triton.cdiv(T, BLOCK_T),)](logits, weights, ids, T, E,
                                                   BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, TOP_K=top_k,
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
