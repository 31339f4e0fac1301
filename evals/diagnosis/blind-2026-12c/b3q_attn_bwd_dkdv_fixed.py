import torch, triton, triton.language as tl


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, S, sm_scale,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # dK, dV for one block of BLOCK_N keys of one (batch, head), looping over all queries.
    # P = exp(Q K^T * scale - lse), dV = P^T dO, dS = P * (dO V^T - delta), dK = scale * dS^T Q
    pid_n = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * S * HEAD_DIM
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    n_ok = offs_n < S
    kv_offs = offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    k = tl.load(k_ptr + base + kv_offs, mask=n_ok[:, None], other=0.0)
    v = tl.load(v_ptr + base + kv_offs, mask=n_ok[:, None], other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)

    for start_m in range(0, S, BLOCK_M):
        rows = start_m + offs_m
        r_ok = rows < S
        qT = tl.load(q_ptr + base + rows[None, :] * HEAD_DIM + offs_d[:, None], mask=r_ok[None, :], other=0.0)
        do = tl.load(do_ptr + base + rows[:, None] * HEAD_DIM + offs_d[None, :], mask=r_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + bh * S + rows, mask=r_ok, other=float("inf"))
        di = tl.load(delta_ptr + bh * S + rows, mask=r_ok, other=0.0)
        sT = tl.dot(k, qT)
        pT = tl.exp(sT * sm_scale - lse[None, :])
        dv += tl.dot(pT.to(tl.float16), do)
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - di[None, :])
        dk += tl.dot(dsT.to(tl.float16), tl.trans(qT))

    dk = dk * sm_scale
    tl.store(dk_ptr + base + kv_offs, dk.to(tl.float16), mask=n_ok[:, None])
    tl.store(dv_ptr + base + kv_offs, dv.to(tl.float16), mask=n_ok[:, None])


def entry(q, k, v, do, lse, delta):
    B, H, S, D = q.shape
    out = torch.empty((2, B, H, S, D), device=q.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N = 64, 128
    grid = (triton.cdiv(S, BLOCK_N), B * H)
    attn_bwd_dkdv_kernel[grid](q, k, v, do, lse, delta, out[0], out[1], S, D ** -0.5,
                               HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=2)
    return out


def reference(q, k, v, do, lse, delta):
    scale = q.shape[-1] ** -0.5
    qf, kf, vf, dof = q.float(), k.float(), v.float(), do.float()
    p = torch.exp(qf @ kf.transpose(-1, -2) * scale - lse[..., None])
    dv = p.transpose(-1, -2) @ dof
    ds = p * (dof @ vf.transpose(-1, -2) - delta[..., None])
    dk = scale * ds.transpose(-1, -2) @ qf
    return torch.stack([dk, dv]).to(torch.float16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    shape = (case["B"], case["H"], case["S"], case["D"])
    q = torch.randn(shape, generator=g).to(torch.float16).to(device)
    k = torch.randn(shape, generator=g).to(torch.float16).to(device)
    v = torch.randn(shape, generator=g).to(torch.float16).to(device)
    do = torch.randn(shape, generator=g).to(torch.float16).to(device)
    # forward statistics that the backward consumes
    s = (q.float() @ k.float().transpose(-1, -2)) * case["D"] ** -0.5
    lse = torch.logsumexp(s, dim=-1).contiguous()
    o = torch.softmax(s, dim=-1) @ v.float()
    delta = (o * do.float()).sum(-1).contiguous()
    return q, k, v, do, lse, delta


CASES = [
    {"B": 2, "H": 16, "S": 2048, "D": 128},
    {"B": 4, "H": 16, "S": 1000, "D": 128},
    {"B": 1, "H": 32, "S": 3000, "D": 128},
    {"B": 2, "H": 24, "S": 1536, "D": 128},
    {"B": 1, "H": 8, "S": 4096, "D": 128},
]
SMALL_CASES = [{"B": 1, "H": 2, "S": 150, "D": 32}, {"B": 2, "H": 1, "S": 70, "D": 16}]
TOLERANCES = {"float16": (3e-2, 3e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    B, H, S, D = case["B"], case["H"], case["S"], case["D"]
    return 2 * 6 * B * H * S * D + 8 * B * H * S


def flops(case):
    return 8 * case["B"] * case["H"] * case["S"] ** 2 * case["D"]
