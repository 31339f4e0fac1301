import torch, triton, triton.language as tl


# Weight gradient of a LoRA down-projection h = x @ A^T:
#   dA[r, j] = sum_t dh[t, r] * x[t, j]      (A is [rank, hidden], gradient kept in fp32)
@triton.jit
def _lora_a_grad_kernel(x_ptr, dh_ptr, out_ptr, T, H, R,
                        stride_xt, stride_dt, stride_or,
                        BLOCK_H: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_R: tl.constexpr):
    pid_h = tl.program_id(0)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    offs_r = tl.arange(0, BLOCK_R)
    offs_t = tl.arange(0, BLOCK_T)
    mask_h = offs_h < H
    mask_r = offs_r < R

    acc = tl.zeros((BLOCK_H, BLOCK_R), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        tt = t0 + offs_t
        mask_t = tt < T
        # x^T tile [BLOCK_H, BLOCK_T]
        xt = tl.load(x_ptr + tt[None, :] * stride_xt + offs_h[:, None],
                     mask=mask_h[:, None] & mask_t[None, :], other=0.0)
        dh = tl.load(dh_ptr + tt[:, None] * stride_dt + offs_r[None, :],
                     mask=mask_t[:, None] & mask_r[None, :], other=0.0)
        acc = tl.dot(xt, dh, acc)

    tl.store(out_ptr + offs_r[None, :] * stride_or + offs_h[:, None], acc,
             mask=mask_h[:, None] & mask_r[None, :])


def entry(x, dh):
    T, H = x.shape
    R = dh.shape[1]
    out = torch.empty((R, H), device=x.device, dtype=torch.float32)
    BLOCK_H, BLOCK_T = 128, 64
    BLOCK_R = max(16, triton.next_power_of_2(R))
    grid = (triton.cdiv(H, BLOCK_H),)
    _lora_a_grad_kernel[grid](x, dh, out, T, H, R,
                              x.stride(0), dh.stride(0), out.stride(0),
                              BLOCK_H=BLOCK_H, BLOCK_T=BLOCK_T, BLOCK_R=BLOCK_R,
                              num_warps=4, num_stages=3)
    return out


def reference(x, dh):
    return dh.float().t() @ x.float()


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    T, H, R = case["T"], case["H"], case["R"]
    x = torch.randn(T, H, generator=g, dtype=torch.float32).to(torch.float16)
    dh = torch.randn(T, R, generator=g, dtype=torch.float32).to(torch.float16)
    return x.to(device), dh.to(device)


CASES = [
    {"T": 32768, "H": 4096, "R": 16},
    {"T": 16384, "H": 4096, "R": 64},
    {"T": 50000, "H": 2048, "R": 32},
    {"T": 65536, "H": 1536, "R": 8},
    {"T": 20000, "H": 7168, "R": 32},
    {"T": 100003, "H": 1024, "R": 16},
]
SMALL_CASES = [{"T": 300, "H": 160, "R": 8}, {"T": 129, "H": 96, "R": 32}]
TOLERANCES = {"float32": (2e-2, 1e-3)}


def bytes_moved(case):
    T, H, R = case["T"], case["H"], case["R"]
    return 2 * (T * H + T * R) + 4 * R * H


def flops(case):
    return 2 * case["T"] * case["H"] * case["R"]


DTYPE_FLOPS = "fp16"
