import torch, triton, triton.language as tl


@triton.jit
def xent_fwd_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    # loss[row] = logsumexp(logits[row]) - logits[row, target[row]]
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    m = tl.full((), float("-inf"), dtype=tl.float32)
    s = tl.zeros((), dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        offs = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + offs, mask=offs < V, other=float("-inf")).to(tl.float32)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    tgt = tl.load(target_ptr + row)
    x_t = tl.load(row_ptr + tgt).to(tl.float32)
    tl.store(loss_ptr + row, m + tl.log(s) - x_t)


def entry(logits, target):
    N, V = logits.shape
    loss = torch.empty((N,), device=logits.device, dtype=torch.float32)
    xent_fwd_kernel[(N,)](logits, target, loss, V, logits.stride(0), BLOCK_V=256, num_warps=4)
    return loss


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none")


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(case["N"], case["V"], generator=g) * 2.0).to(torch.bfloat16)
    target = torch.randint(0, case["V"], (case["N"],), generator=g, dtype=torch.int64)
    return (logits.to(device), target.to(device))


CASES = [
    {"N": 4096, "V": 32000},
    {"N": 2048, "V": 50304},
    {"N": 1024, "V": 128256},
    {"N": 512, "V": 151936},
    {"N": 3000, "V": 32768},
]
SMALL_CASES = [{"N": 8, "V": 1000}, {"N": 5, "V": 777}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    return case["N"] * case["V"] * 2 + case["N"] * 12


def flops(case):
    return 4 * case["N"] * case["V"]
