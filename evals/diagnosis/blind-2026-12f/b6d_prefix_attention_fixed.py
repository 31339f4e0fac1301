import torch
import triton
import triton.language as tl


@triton.jit
def _prefix_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
                        stride_qh, stride_qm, stride_kh, stride_kn, stride_oh, stride_om,
                        Lq, Lk, sm_scale,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Attention of a chunk of new queries against a cached prefix (no causal
    # mask inside the prefix). Returns the normalised output and the row
    # log-sum-exp so the result can later be merged with other partial states.
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = q_ptr + bh.to(tl.int64) * stride_qh
    k_base = k_ptr + bh.to(tl.int64) * stride_kh
    v_base = v_ptr + bh.to(tl.int64) * stride_kh

    m_mask = offs_m < Lq
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=m_mask[:, None], other=0.0)
    # K is read as [HEAD_DIM, BLOCK_N], V as [BLOCK_N, HEAD_DIM]
    k_ptrs = k_base + offs_n[None, :] * stride_kn + offs_d[:, None]
    v_ptrs = v_base + offs_n[:, None] * stride_kn + offs_d[None, :]

    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, Lk, BLOCK_N):
        n_valid = (start_n + offs_n) < Lk
        k = tl.load(k_ptrs + start_n * stride_kn, mask=n_valid[None, :], other=0.0)
        v = tl.load(v_ptrs + start_n * stride_kn, mask=n_valid[:, None], other=0.0)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(n_valid[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453
    o_ptrs = o_ptr + bh.to(tl.int64) * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=m_mask[:, None])
    tl.store(lse_ptr + bh * Lq + offs_m, lse, mask=m_mask)


def entry(q, k, v):
    # q: [B, H, Lq, D], k/v: [B, H, Lk, D]
    B, H, Lq, D = q.shape
    Lk = k.shape[2]
    o = torch.empty_like(q)
    lse = torch.empty((B, H, Lq), dtype=torch.float32, device=q.device)
    BLOCK_M, BLOCK_N = 128, 64
    grid = (triton.cdiv(Lq, BLOCK_M), B * H)
    _prefix_attn_kernel[grid](q, k, v, o, lse,
                              q.stride(1), q.stride(2), k.stride(1), k.stride(2), o.stride(1), o.stride(2),
                              Lq, Lk, D ** -0.5,
                              HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=3)
    return o, lse


def reference(q, k, v):
    D = q.shape[-1]
    s = torch.matmul(q.float(), k.float().transpose(-1, -2)) * D ** -0.5
    lse = torch.logsumexp(s, dim=-1)
    o = torch.matmul(torch.softmax(s, dim=-1), v.float())
    return o.to(q.dtype), lse


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    B, H, Lq, Lk, D = case["B"], case["H"], case["Lq"], case["Lk"], case["D"]
    q = torch.randn(B, H, Lq, D, generator=g).to(torch.float16)
    k = torch.randn(B, H, Lk, D, generator=g).to(torch.float16)
    v = torch.randn(B, H, Lk, D, generator=g).to(torch.float16)
    return (q.to(device), k.to(device), v.to(device))


CASES = [
    {"B": 2, "H": 32, "Lq": 512, "Lk": 16384, "D": 128},
    {"B": 2, "H": 32, "Lq": 512, "Lk": 8192, "D": 128},
    {"B": 4, "H": 16, "Lq": 384, "Lk": 12000, "D": 128},
    {"B": 2, "H": 40, "Lq": 300, "Lk": 30000, "D": 128},
    {"B": 8, "H": 16, "Lq": 256, "Lk": 20480, "D": 128},
    {"B": 2, "H": 24, "Lq": 1000, "Lk": 6000, "D": 64},
]
SMALL_CASES = [
    {"B": 1, "H": 2, "Lq": 40, "Lk": 150, "D": 64},
    {"B": 2, "H": 1, "Lq": 130, "Lk": 64, "D": 32},
]
TOLERANCES = {"float16": (2e-2, 2e-2), "float32": (1e-3, 1e-3)}


def bytes_moved(case):
    B, H, Lq, Lk, D = case["B"], case["H"], case["Lq"], case["Lk"], case["D"]
    return 2 * (2 * B * H * Lq * D + 2 * B * H * Lk * D) + 4 * B * H * Lq


def flops(case):
    B, H, Lq, Lk, D = case["B"], case["H"], case["Lq"], case["Lk"], case["D"]
    return 4 * B * H * Lq * Lk * D


DTYPE_FLOPS = "fp16"
