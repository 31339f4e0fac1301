import torch, triton, triton.language as tl


@triton.jit
def router_softmax_kernel(
    logits_ptr, probs_ptr, E,
    stride_l, stride_p,
    BLOCK_E: tl.constexpr,
):
    # softmax over the experts of one token
    t = tl.program_id(0)
    offs = tl.arange(0, BLOCK_E)
    mask = offs < E
    x = tl.load(logits_ptr + t * stride_l + offs, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(probs_ptr + t * stride_p + offs, e / s, mask=mask)


def entry(logits):
    T, E = logits.shape
    probs = torch.empty((T, E), device=logits.device, dtype=torch.float32)
    BLOCK_E = triton.next_power_of_2(E)
    router_softmax_kernel[(T,)](
        logits, probs, E, logits.stride(0), probs.stride(0),
        BLOCK_E=BLOCK_E,
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
