import torch
import triton
import triton.language as tl


@triton.jit
def topk_router_kernel(logits_ptr, weights_ptr, ids_ptr, E, stride_t,
                       TOPK: tl.constexpr, BLOCK_E: tl.constexpr):
    # softmax over experts, then the TOPK largest probabilities and their expert ids
    t = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    mask = cols < E
    x = tl.load(logits_ptr + t * stride_t + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    denom = tl.sum(tl.where(mask, tl.exp(x - m), 0.0), axis=0)
    for i in tl.static_range(TOPK):
        v = tl.max(x, axis=0)
        idx = tl.min(tl.where(x == v, cols, BLOCK_E), axis=0)
        tl.store(weights_ptr + t * TOPK + i, tl.exp(v - m) / denom)
        tl.store(ids_ptr + t * TOPK + i, idx)
        x = tl.where(cols == idx, float("-inf"), x)


def entry(router_logits, top_k):
    # router_logits: [T, E] fp32 -> (weights [T, top_k] fp32, expert ids [T, top_k] int32)
    T, E = router_logits.shape
    weights = torch.empty((T, top_k), device=router_logits.device, dtype=torch.float32)
    ids = torch.empty((T, top_k), device=router_logits.device, dtype=torch.int32)
    BLOCK_E = triton.next_power_of_2(E)
    topk_router_kernel[(T,)](router_logits, weights, ids, E, router_logits.stride(0),
                             TOPK=top_k, BLOCK_E=BLOCK_E)
    return weights, ids


def reference(router_logits, top_k):
    logits = router_logits.float()
    ids = torch.topk(logits, top_k, dim=-1).indices
    probs = torch.softmax(logits, dim=-1)
    return probs.gather(1, ids), ids.to(torch.int32)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, E = case["T"], case["E"]
    logits = torch.randn(T, E, generator=g, dtype=torch.float32) * 2.0
    return (logits.to(device), case["K"])


CASES = [
    {"T": 262144, "E": 64, "K": 6},
    {"T": 131072, "E": 160, "K": 6},
    {"T": 100000, "E": 256, "K": 8},
    {"T": 300000, "E": 60, "K": 4},
    {"T": 2000000, "E": 8, "K": 2},
    {"T": 196608, "E": 128, "K": 8},
]
SMALL_CASES = [
    {"T": 37, "E": 64, "K": 6},
    {"T": 50, "E": 60, "K": 4},
    {"T": 21, "E": 8, "K": 2},
]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    T, E, K = case["T"], case["E"], case["K"]
    return T * E * 4 + T * K * 8


def flops(case):
    T, E, K = case["T"], case["E"], case["K"]
    return T * E * (4 + 2 * K)
