import math
import torch
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(
    desc_ptr,      # [G, 9] int64: a_ptr, b_ptr, c_ptr, m, n, k, lda, ldb, ldc
    group_size,
    NUM_SM: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # persistent grouped GEMM: C_g = A_g @ B_g for every problem g in the descriptor table
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        d = desc_ptr + g * 9
        gm = tl.load(d + 3).to(tl.int32)
        gn = tl.multiple_of(tl.load(d + 4).to(tl.int32), 16)
        gk = tl.multiple_of(tl.load(d + 5).to(tl.int32), 16)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            a_ptr = tl.multiple_of(tl.load(d + 0).to(tl.pointer_type(tl.float16)), 16)
            b_ptr = tl.multiple_of(tl.load(d + 1).to(tl.pointer_type(tl.float16)), 16)
            c_ptr = tl.multiple_of(tl.load(d + 2).to(tl.pointer_type(tl.float16)), 16)
            lda = tl.multiple_of(tl.load(d + 6).to(tl.int32), 16)
            ldb = tl.multiple_of(tl.load(d + 7).to(tl.int32), 16)
            ldc = tl.multiple_of(tl.load(d + 8).to(tl.int32), 16)

            tile_in_gemm = tile_idx - last_problem_end
            tile_m = tile_in_gemm // num_n_tiles
            tile_n = tile_in_gemm % num_n_tiles
            offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
            m_mask = offs_m[:, None] < gm
            n_mask = offs_n[None, :] < gn
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                k_left = gk - kk * BLOCK_K
                a = tl.load(a_ptrs, mask=m_mask & (offs_k[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=n_mask & (offs_k[:, None] < k_left), other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            c_ptrs = c_ptr + offs_m[:, None] * ldc + offs_n[None, :]
            tl.store(c_ptrs, acc.to(tl.float16), mask=m_mask & n_mask)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def _group_rows(case):
    # deterministic, uneven token counts per group (e.g. tokens routed to each expert)
    G, M = case["G"], case["M"]
    w = [1.0 + 0.9 * math.sin(1.7 * g + 0.3) for g in range(G)]
    s = sum(w)
    return [max(1, int(round(M * G * wi / s))) for wi in w]


def entry(a, b, rows):
    # a: [sum(rows), K] packed tokens, b: [G, K, N] weights, rows: [G] int32 token counts
    G, K, N = b.shape
    counts = rows.tolist()
    c = torch.empty((a.shape[0], N), device=a.device, dtype=a.dtype)
    desc = []
    start = 0
    for g in range(G):
        m = counts[g]
        desc += [a.data_ptr() + start * a.stride(0) * a.element_size(), b[g].data_ptr(),
                 c.data_ptr() + start * c.stride(0) * c.element_size(),
                 m, N, K, a.stride(0), b.stride(1), c.stride(0)]
        start += m
    desc = torch.tensor(desc, dtype=torch.int64).to(a.device)
    if a.device.type == "cuda":
        num_sm = torch.cuda.get_device_properties(a.device).multi_processor_count
    else:
        num_sm = 4
    grouped_matmul_kernel[(num_sm,)](
        desc, G,
        NUM_SM=num_sm, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
        num_warps=8, num_stages=3,
    )
    return c


def reference(a, b, rows):
    out = []
    start = 0
    for g, m in enumerate(rows.tolist()):
        out.append(a[start:start + m].float() @ b[g].float())
        start += m
    return torch.cat(out).to(a.dtype)


def make_inputs(case, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    G, N, K = case["G"], case["N"], case["K"]
    rows = _group_rows(case)
    a = torch.randn(sum(rows), K, generator=g, dtype=torch.float32)
    b = torch.randn(G, K, N, generator=g, dtype=torch.float32) / math.sqrt(K)
    return (a.to(torch.float16).to(device), b.to(torch.float16).to(device),
            torch.tensor(rows, dtype=torch.int32).to(device))


CASES = [
    {"G": 8, "M": 2048, "N": 4096, "K": 4096},
    {"G": 16, "M": 768, "N": 2816, "K": 2048},
    {"G": 4, "M": 3000, "N": 5120, "K": 1536},
    {"G": 32, "M": 384, "N": 1408, "K": 2048},
    {"G": 8, "M": 1500, "N": 14336, "K": 1024},
    {"G": 6, "M": 2500, "N": 3584, "K": 3584},
]
SMALL_CASES = [
    {"G": 3, "M": 40, "N": 48, "K": 80},
    {"G": 2, "M": 70, "N": 144, "K": 64},
]
TOLERANCES = {"float16": (2e-2, 2e-2)}
DTYPE_FLOPS = "fp16"


def bytes_moved(case):
    rows = sum(_group_rows(case))
    G, N, K = case["G"], case["N"], case["K"]
    return 2 * (rows * K + G * K * N + rows * N)


def flops(case):
    return 2 * sum(_group_rows(case)) * case["N"] * case["K"]
