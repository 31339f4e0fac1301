import torch
import triton
import triton.language as tl


@triton.jit
def _router_softmax_kernel(logits_ptr, probs_ptr, n_tokens, n_experts,
                           BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    mask = (rows[:, None] < n_tokens) & (cols[None, :] < n_experts)
    offs = rows[:, None] * n_experts + cols[None, :]
    x = tl.load(logits_ptr + offs, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    p = e / tl.sum(e, axis=1)[:, None]
    tl.store(probs_ptr + offs, p, mask=mask)


def entry(router_logits, top_k: int):
    # softmax gating over experts, keep the top_k experts per token and renormalise their weights
    T, E = router_logits.shape
    probs = torch.empty_like(router_logits)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_T = max(1, 4096 // BLOCK_E)
    grid = (triton.cdiv(T, BLOCK_T),)
    _router_softmax_kernel[grid](router_logits, probs, T, E, BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E, num_warps=4)
    weights, ids = torch.topk(probs, top_k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids.to(torch.int32)


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
