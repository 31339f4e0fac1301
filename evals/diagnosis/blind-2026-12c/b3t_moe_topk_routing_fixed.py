import torch
import triton
import triton.language as tl


@triton.jit
def _router_topk_kernel(logits_ptr, w_ptr, id_ptr, n_tokens, n_experts, top_k,
                        BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    kcols = tl.arange(0, BLOCK_K)
    row_mask = rows < n_tokens
    mask = row_mask[:, None] & (cols[None, :] < n_experts)
    offs = rows[:, None] * n_experts + cols[None, :]
    x = tl.load(logits_ptr + offs, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    p = e / tl.sum(e, axis=1)[:, None]
    p = tl.where(cols[None, :] < n_experts, p, -1.0)
    w_sel = tl.zeros((BLOCK_T, BLOCK_K), tl.float32)
    id_sel = tl.zeros((BLOCK_T, BLOCK_K), tl.int32)
    for j in range(top_k):
        best = tl.max(p, axis=1)
        best_id = tl.min(tl.where(p == best[:, None], cols[None, :], BLOCK_E), axis=1)
        w_sel = tl.where(kcols[None, :] == j, best[:, None], w_sel)
        id_sel = tl.where(kcols[None, :] == j, best_id[:, None], id_sel)
        p = tl.where(cols[None, :] == best_id[:, None], -2.0, p)
    w_sel = w_sel / tl.sum(w_sel, axis=1)[:, None]
    out_offs = rows[:, None] * top_k + kcols[None, :]
    out_mask = row_mask[:, None] & (kcols[None, :] < top_k)
    tl.store(w_ptr + out_offs, w_sel, mask=out_mask)
    tl.store(id_ptr + out_offs, id_sel, mask=out_mask)


def entry(router_logits, top_k: int):
    # softmax gating over experts, keep the top_k experts per token and renormalise their weights
    T, E = router_logits.shape
    weights = torch.empty((T, top_k), dtype=torch.float32, device=router_logits.device)
    ids = torch.empty((T, top_k), dtype=torch.int32, device=router_logits.device)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_T = max(1, 4096 // BLOCK_E)
    grid = (triton.cdiv(T, BLOCK_T),)
    _router_topk_kernel[grid](router_logits, weights, ids, T, E, top_k, BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E,
                              BLOCK_K=triton.next_power_of_2(top_k), num_warps=4)
    return weights, ids


def reference(router_logits, top_k: int):
    probs = torch.softmax(router_logits.float(), dim=-1)
    weights, ids = torch.topk(probs, top_k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids.to(torch.int32)


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn((case["T"], case["E"]), generator=gen, dtype=torch.float32)
    return logits.to(device), case["k"]


CASES = [
    {"T": 131072, "E": 128, "k": 8},
    {"T": 65536, "E": 256, "k": 8},
    {"T": 100000, "E": 160, "k": 6},
    {"T": 262144, "E": 64, "k": 6},
    {"T": 250000, "E": 60, "k": 4},
    {"T": 393216, "E": 40, "k": 4},
]
SMALL_CASES = [{"T": 37, "E": 60, "k": 4}, {"T": 20, "E": 128, "k": 8}, {"T": 50, "E": 8, "k": 2}]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    T, E, k = case["T"], case["E"], case["k"]
    return T * E * 4 + T * k * 8


def flops(case):
    return 4 * case["T"] * case["E"]
