"""Per-sample MSE loss mean((pred - target)^2, dim=1) on bf16 [B, N] with few, very long rows; fixed: split each row over many programs (partial sums) and finish with a small second-stage reduction."""
import torch
import triton
import triton.language as tl


@triton.jit
def mse_partial_kernel(p_ptr, t_ptr, part_ptr, N, CHUNK, SPLIT, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sid = tl.program_id(1)
    base = row.to(tl.int64) * N
    lo = sid * CHUNK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(lo, lo + CHUNK, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < N
        p = tl.load(p_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        d = p - t
        acc += d * d
    tl.store(part_ptr + row * SPLIT + sid, tl.sum(acc, axis=0))


@triton.jit
def mse_finish_kernel(part_ptr, out_ptr, N, SPLIT, BLOCK_S: tl.constexpr):
    row = tl.program_id(0)
    s = tl.arange(0, BLOCK_S)
    v = tl.load(part_ptr + row * SPLIT + s, mask=s < SPLIT, other=0.0)
    tl.store(out_ptr + row, tl.sum(v, axis=0) / N)


def entry(pred, target):
    B, N = pred.shape
    out = torch.empty(B, device=pred.device, dtype=torch.float32)
    BLOCK = 4096
    # aim for ~4 programs per SM in total, each chunk a multiple of BLOCK
    split = max(1, min(triton.cdiv(N, BLOCK), triton.cdiv(528, B)))
    chunk = triton.cdiv(triton.cdiv(N, split), BLOCK) * BLOCK
    split = triton.cdiv(N, chunk)
    part = torch.empty(B * split, device=pred.device, dtype=torch.float32)
    mse_partial_kernel[(B, split)](pred, target, part, N, chunk, split, BLOCK=BLOCK, num_warps=8)
    mse_finish_kernel[(B,)](part, out, N, split, BLOCK_S=triton.next_power_of_2(split), num_warps=1)
    return out


def reference(pred, target):
    return ((pred.float() - target.float()) ** 2).mean(dim=1)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, N = case["shape"]
    pred = torch.randn(B, N, generator=g, dtype=torch.float32).to(torch.bfloat16)
    target = torch.randn(B, N, generator=g, dtype=torch.float32).to(torch.bfloat16)
    return (pred.to(device), target.to(device))


# per-sample diffusion loss: few samples, each a flattened latent / image
CASES = [
    {"shape": [8, 4 * 128 * 128 * 64]},
    {"shape": [4, 3 * 2048 * 2048]},
    {"shape": [16, 4 * 96 * 96 * 64 + 5]},
    {"shape": [2, 16 * 64 * 200 * 200 + 3]},
    {"shape": [6, 3 * 1024 * 2000 + 1]},
]
SMALL_CASES = [{"shape": [3, 5000]}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    B, N = case["shape"]
    return 2 * 2 * B * N + 4 * B


def flops(case):
    B, N = case["shape"]
    return 3 * B * N
