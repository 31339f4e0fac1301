"""Elementwise sigmoid focal loss (RetinaNet, reduction='none') from 16-bit logits and one-hot targets, fp32 loss out. Planted: all per-element math is upcast to float64 "for stability"."""
import torch
import triton
import triton.language as tl


@triton.jit
def _sigmoid_focal_loss_kernel(logit_ptr, target_ptr, loss_ptr, n_elements, alpha, gamma,
                               BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(logit_ptr + offs, mask=mask, other=0.0).to(tl.float64)
    t = tl.load(target_ptr + offs, mask=mask, other=0.0).to(tl.float64)

    e = tl.exp(-tl.abs(x))
    # numerically stable BCE-with-logits: max(x, 0) - x*t + log(1 + exp(-|x|))
    ce = tl.maximum(x, 0.0) - x * t + tl.log(1.0 + e)
    p = tl.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    p_t = p * t + (1.0 - p) * (1.0 - t)
    alpha_t = alpha * t + (1.0 - alpha) * (1.0 - t)
    modulator = tl.exp(gamma * tl.log(1.0 - p_t))      # (1 - p_t) ** gamma
    loss = alpha_t * modulator * ce
    tl.store(loss_ptr + offs, loss.to(tl.float32), mask=mask)


def entry(logits, targets):
    assert logits.is_contiguous() and targets.is_contiguous()
    loss = torch.empty(logits.shape, device=logits.device, dtype=torch.float32)
    n = logits.numel()
    BLOCK = 1024
    _sigmoid_focal_loss_kernel[(triton.cdiv(n, BLOCK),)](
        logits, targets, loss, n, 0.25, 2.0, BLOCK=BLOCK, num_warps=4,
    )
    return loss


def reference(logits, targets):
    x = logits.double()
    t = targets.double()
    p = torch.sigmoid(x)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    alpha_t = 0.25 * t + 0.75 * (1 - t)
    return (alpha_t * (1 - p_t) ** 2.0 * ce).float()


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    A, C = case["anchors"], case["classes"]
    dtype = getattr(torch, case.get("dtype", "bfloat16"))
    logits = (3.0 * torch.randn(A, C, generator=g) - 2.0).to(dtype)
    labels = torch.randint(0, C, (A,), generator=g)
    pos = torch.rand(A, generator=g) < 0.3
    targets = torch.zeros(A, C)
    targets[pos, labels[pos]] = 1.0
    return logits.to(device), targets.to(dtype).to(device)


CASES = [
    {"anchors": 262144, "classes": 91, "dtype": "bfloat16"},
    {"anchors": 500000, "classes": 80, "dtype": "float16"},
    {"anchors": 100003, "classes": 1203, "dtype": "bfloat16"},
    {"anchors": 1048576, "classes": 37, "dtype": "bfloat16"},
]
SMALL_CASES = [
    {"anchors": 100, "classes": 91, "dtype": "bfloat16"},
    {"anchors": 257, "classes": 13, "dtype": "float16"},
]
TOLERANCES = {"float32": (1e-5, 1e-4)}


def bytes_moved(case):
    n = case["anchors"] * case["classes"]
    return n * (2 + 2 + 4)


def flops(case):
    return 30 * case["anchors"] * case["classes"]

FEW_CASES = "blind case written with four shapes (kopt asks for five unless a task says why)"
