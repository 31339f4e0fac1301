import torch, triton, triton.language as tl


@triton.jit
def router_softmax_kernel(
    logits_ptr, probs_ptr, T, E,
    stride_l, stride_p,
    BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr,
):
    # softmax over the experts of BLOCK_T tokens
    pid = tl.program_id(0)
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs = tl.arange(0, BLOCK_E)
    rmask = rows < T
    cmask = offs < E
    mask = rmask[:, None] & cmask[None, :]
    x = tl.load(logits_ptr + rows[:, None] * stride_l + offs[None, :], mask=mask,
                other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=1)
    e = tl.exp(x - m[:, None])
    s = tl.sum(e, axis=1)
    tl.store(probs_ptr + rows[:, None] * stride_p + offs[None, :], e / s[:, None], mask=mask)


def entry(logits):
    T, E = logits.shape
    probs = torch.empty((T, E), device=logits.device, dtype=torch.float32)
    BLOCK_E = triton.next_power_of_2(E)
    BLOCK_T = max(1, 4096 // BLOCK_E)
    router_softmax_kernel[(triton.cdiv(T, BLOCK_T),)](
        logits, probs, T, E, logits.stride(0), probs.stride(0),
        BLOCK_T=BLOCK_T, BLOCK_E=BLOCK_E,
    )
    return probs


def reference(logits):
    return torch.softmax(logits.float(), dim=-1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, E = case["T"], case["E"]
    logits = torch.randn((T, E), generator=g, dtype=torch.float32) * 2.0
    return (logits.to(torch.bfloat16).to(device),)


CASES = [
    {"T": 1048576, "E": 16},
    {"T": 65536, "E": 256},
    {"T": 262144, "E": 64},
    {"T": 100003, "E": 160},
    {"T": 393216, "E": 40},
    {"T": 131072, "E": 128},
]
SMALL_CASES = [{"T": 50, "E": 16}, {"T": 37, "E": 40}, {"T": 9, "E": 160}]
TOLERANCES = {"float32": (1e-5, 1e-5)}


def bytes_moved(case):
    T, E = case["T"], case["E"]
    return T * E * (2 + 4)


def flops(case):
    T, E = case["T"], case["E"]
    return 4 * T * E
