"""Per-channel linear recurrence h_t = a * h_{t-1} + x_t over [B, T, D] fp32 (EMA / linear-RNN scan); planted: one program per (batch, channel) walking T with a scalar loop."""
import torch
import triton
import triton.language as tl


@triton.jit
def ema_scan_kernel(x_ptr, a_ptr, out_ptr, T, D):
    pid = tl.program_id(0)
    b = pid // D
    d = pid % D
    a = tl.load(a_ptr + d)
    base = b * T * D + d
    h = 0.0
    for t in range(T):
        x = tl.load(x_ptr + base + t * D)
        h = a * h + x
        tl.store(out_ptr + base + t * D, h)


def entry(x, a):
    B, T, D = x.shape
    out = torch.empty_like(x)
    ema_scan_kernel[(B * D,)](x, a, out, T, D, num_warps=1)
    return out


def reference(x, a):
    B, T, D = x.shape
    out = torch.empty_like(x)
    h = torch.zeros(B, D, dtype=torch.float64, device=x.device)
    a64 = a.double()
    # chunked torch reference: exact recurrence h_t = a * h_{t-1} + x_t
    xd = x.double()
    for t in range(T):
        h = a64 * h + xd[:, t]
        out[:, t] = h.float()
    return out


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    B, T, D = case["shape"]
    x = torch.randn(B, T, D, generator=g, dtype=torch.float32)
    a = torch.sigmoid(torch.randn(D, generator=g, dtype=torch.float32) + 2.0)
    return (x.to(device), a.to(device))


CASES = [
    {"shape": [8, 2048, 1024]},
    {"shape": [4, 4096, 768]},
    {"shape": [16, 1023, 512]},
    {"shape": [2, 8191, 1536]},
    {"shape": [32, 511, 2048]},
]
SMALL_CASES = [{"shape": [2, 37, 20]}]
TOLERANCES = {"float32": (1e-4, 1e-4)}


def bytes_moved(case):
    B, T, D = case["shape"]
    return 2 * 4 * B * T * D + 4 * D


def flops(case):
    B, T, D = case["shape"]
    return 2 * B * T * D
