import torch
import triton
import triton.language as tl


@triton.jit
def grouped_gemm_kernel(a_ptr, b_ptr, c_ptr, meta_ptr, group_count,
                        NUM_PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Persistent grouped GEMM: for each group g, C_g[M_g, N_g] = A_g[M_g, K_g] @ B_g[K_g, N_g].
    # meta[g] = (M, N, K, a_offset, b_offset, c_offset), offsets in elements into the flat buffers.
    tile_idx = tl.program_id(0)
    group_start = 0
    for g in range(group_count):
        gm = tl.load(meta_ptr + g * 6 + 0).to(tl.int32)
        gn = tl.multiple_of(tl.load(meta_ptr + g * 6 + 1).to(tl.int32), 16)
        gk = tl.multiple_of(tl.load(meta_ptr + g * 6 + 2).to(tl.int32), 16)
        a_off = tl.multiple_of(tl.load(meta_ptr + g * 6 + 3), 16)
        b_off = tl.multiple_of(tl.load(meta_ptr + g * 6 + 4), 16)
        c_off = tl.multiple_of(tl.load(meta_ptr + g * 6 + 5), 16)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = tl.cdiv(gm, BLOCK_M) * num_n_tiles
        while tile_idx >= group_start and tile_idx < group_start + num_tiles:
            local = tile_idx - group_start
            tile_m = local // num_n_tiles
            tile_n = local % num_n_tiles
            offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + a_off + offs_m[:, None] * gk + offs_k[None, :]
            b_ptrs = b_ptr + b_off + offs_k[:, None] * gn + offs_n[None, :]
            mask_m = offs_m[:, None] < gm
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                a = tl.load(a_ptrs, mask=mask_m, other=0.0)
                b = tl.load(b_ptrs)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * gn
            c_ptrs = c_ptr + c_off + offs_m[:, None] * gn + offs_n[None, :]
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m)
            tile_idx += NUM_PROGRAMS
        group_start = group_start + num_tiles


def entry(a, b, meta, c_numel):
    # N_g is a multiple of BLOCK_N and K_g a multiple of BLOCK_K for every group
    c = torch.empty((c_numel,), device=a.device, dtype=a.dtype)
    num_programs = torch.cuda.get_device_properties(a.device).multi_processor_count if a.is_cuda else 4
    grouped_gemm_kernel[(num_programs,)](a, b, c, meta, meta.shape[0],
                                         NUM_PROGRAMS=num_programs, BLOCK_M=128, BLOCK_N=128,
                                         BLOCK_K=32, num_warps=8, num_stages=4)
    return c


def reference(a, b, meta, c_numel):
    out = []
    for gm, gn, gk, ao, bo, co in meta.cpu().tolist():
        A = a[ao:ao + gm * gk].view(gm, gk).float()
        B = b[bo:bo + gk * gn].view(gk, gn).float()
        out.append((A @ B).to(a.dtype).reshape(-1))
    return torch.cat(out)


def _shapes(case):
    shapes = []
    for g in range(case["groups"]):
        gm = case["m"] + (g * 389) % 700 - 350
        gn = case["n"] + 128 * (g % 3)
        gk = case["k"] + 64 * (g % 2)
        shapes.append((gm, gn, gk))
    return shapes


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    shapes = _shapes(case)
    meta, a_parts, b_parts = [], [], []
    ao = bo = co = 0
    for gm, gn, gk in shapes:
        a_parts.append(torch.randn(gm * gk, generator=gen))
        b_parts.append(torch.randn(gk * gn, generator=gen) / gk ** 0.5)
        meta.append([gm, gn, gk, ao, bo, co])
        ao += gm * gk
        bo += gk * gn
        co += gm * gn
    a = torch.cat(a_parts).to(torch.float16).to(device)
    b = torch.cat(b_parts).to(torch.float16).to(device)
    meta = torch.tensor(meta, dtype=torch.int64).to(device)
    return a, b, meta, co


CASES = [
    {"groups": 8, "m": 1536, "n": 2816, "k": 2048},
    {"groups": 6, "m": 2000, "n": 4096, "k": 4096},
    {"groups": 16, "m": 900, "n": 1408, "k": 2048},
    {"groups": 4, "m": 3000, "n": 5632, "k": 1536},
    {"groups": 12, "m": 1200, "n": 3584, "k": 2560},
]
SMALL_CASES = [{"groups": 3, "m": 400, "n": 128, "k": 64}]
TOLERANCES = {"float16": (2e-2, 1e-2)}


def bytes_moved(case):
    return sum(2 * (gm * gk + gk * gn + gm * gn) for gm, gn, gk in _shapes(case))


def flops(case):
    return sum(2 * gm * gn * gk for gm, gn, gk in _shapes(case))


DTYPE_FLOPS = "fp16"
