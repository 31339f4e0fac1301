import torch, triton, triton.language as tl


@triton.jit
def _topk_gate_kernel(logits_ptr, out_ptr, E, stride_t, K: tl.constexpr, BLOCK_E: tl.constexpr):
    # one token: softmax over its top-K experts, zero weight elsewhere
    t = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    mask = cols < E
    x = tl.load(logits_ptr + t * stride_t + cols, mask=mask, other=float("-inf")).to(tl.float32)
    cur = x
    chosen = cols < 0
    for _ in tl.static_range(K):
        m = tl.max(cur, axis=0)
        idx = tl.min(tl.where(cur == m, cols, BLOCK_E), axis=0)
        sel = cols == idx
        chosen = chosen | sel
        cur = tl.where(sel, float("-inf"), cur)
    top = tl.max(x, axis=0)
    p = tl.where(chosen, tl.exp(x - top), 0.0)
    w = p / tl.sum(p, axis=0)
    tl.store(out_ptr + t * stride_t + cols, w, mask=mask)


def entry(router_logits, k):
    T, E = router_logits.shape
    out = torch.empty((T, E), device=router_logits.device, dtype=torch.float32)
    BLOCK_E = triton.next_power_of_2(E)
    _topk_gate_kernel[(T,)](router_logits, out, E, router_logits.stride(0), K=k, BLOCK_E=BLOCK_E)
    return out


def reference(router_logits, k):
    probs = torch.softmax(router_logits.float(), dim=-1)
    topv, topi = torch.topk(probs, k, dim=-1)
    topv = topv / topv.sum(-1, keepdim=True)
    return torch.zeros_like(probs).scatter(1, topi, topv)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(case["T"], case["E"], generator=g, dtype=torch.float32)
    return logits.to(device), case["K"]


CASES = [
    {"T": 1048576, "E": 8, "K": 2},
    {"T": 786432, "E": 16, "K": 4},
    {"T": 600000, "E": 32, "K": 4},
    {"T": 300000, "E": 64, "K": 6},
    {"T": 1000003, "E": 8, "K": 2},
    {"T": 250000, "E": 60, "K": 4},
]
SMALL_CASES = [{"T": 300, "E": 8, "K": 2}, {"T": 77, "E": 60, "K": 4}]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    return 2 * case["T"] * case["E"] * 4


def flops(case):
    return case["T"] * case["E"] * (3 * case["K"] + 4)
