import torch, triton, triton.language as tl


@triton.jit
def router_topk_kernel(logits_ptr, weights_ptr, ids_ptr, T, E, stride_t,
                       TOPK: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_E: tl.constexpr,
                       BLOCK_T: tl.constexpr):
    # softmax over the experts of each token, then top-k with renormalised weights
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = offs_t < T
    offs_e = tl.arange(0, BLOCK_E)
    emask = offs_e < E
    x = tl.load(logits_ptr + offs_t.to(tl.int64)[:, None] * stride_t + offs_e[None, :],
                mask=tmask[:, None] & emask[None, :], other=-float("inf"))
    x = tl.where(tmask[:, None], x, 0.0)
    x = x - tl.max(x, axis=1)[:, None]
    p = tl.exp(x)
    p = p / tl.sum(p, axis=1)[:, None]
    p = tl.where(emask[None, :], p, -1.0)

    offs_k = tl.arange(0, BLOCK_K)
    kmask = offs_k < TOPK
    top_w = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    top_i = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int32)
    for i in tl.static_range(TOPK):
        w = tl.max(p, axis=1)
        idx = tl.argmax(p, axis=1)
        top_w = tl.where(offs_k[None, :] == i, w[:, None], top_w)
        top_i = tl.where(offs_k[None, :] == i, idx.to(tl.int32)[:, None], top_i)
        p = tl.where(offs_e[None, :] == idx[:, None], -1.0, p)

    top_w = top_w / tl.sum(top_w, axis=1)[:, None]
    out_off = offs_t[:, None] * TOPK + offs_k[None, :]
    omask = tmask[:, None] & kmask[None, :]
    tl.store(weights_ptr + out_off, top_w, mask=omask)
    tl.store(ids_ptr + out_off, top_i, mask=omask)


def entry(router_logits, top_k):
    T, E = router_logits.shape
    weights = torch.empty((T, top_k), device=router_logits.device, dtype=torch.float32)
    ids = torch.empty((T, top_k), device=router_logits.device, dtype=torch.int32)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_T = max(1, 2048 // BLOCK_E)
    router_topk_kernel[(triton.cdiv(T, BLOCK_T),)](
        router_logits, weights, ids, T, E, router_logits.stride(0),
        TOPK=top_k, BLOCK_K=triton.next_power_of_2(top_k), BLOCK_E=BLOCK_E, BLOCK_T=BLOCK_T)
    return weights, ids


def reference(router_logits, top_k):
    p = torch.softmax(router_logits.float(), dim=-1)
    w, i = torch.topk(p, top_k, dim=-1)
    w = w / w.sum(dim=-1, keepdim=True)
    return w, i.to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn((case["T"], case["E"]), generator=g, dtype=torch.float32)
    return x.to(device), case["K"]


CASES = [
    {"T": 262144, "E": 64, "K": 6},
    {"T": 200000, "E": 60, "K": 4},
    {"T": 131072, "E": 128, "K": 8},
    {"T": 100000, "E": 256, "K": 8},
    {"T": 2097152, "E": 8, "K": 2},
    {"T": 300000, "E": 160, "K": 6},
]
SMALL_CASES = [{"T": 100, "E": 60, "K": 6}, {"T": 50, "E": 64, "K": 4}, {"T": 37, "E": 8, "K": 2}, {"T": 20, "E": 128, "K": 8}]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    T, E, K = case["T"], case["E"], case["K"]
    return 4 * T * E + 8 * T * K


def flops(case):
    T, E, K = case["T"], case["E"], case["K"]
    return 5 * T * E + 2 * T * E * K
