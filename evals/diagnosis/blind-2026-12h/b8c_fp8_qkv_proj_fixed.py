import torch, triton, triton.language as tl


@triton.jit
def fp8_sliced_linear_kernel(x_ptr, x_scale_ptr, w_tab_ptr, w_scale_ptr, n_tab_ptr, col_tab_ptr, y_ptr,
                             M, K, stride_xm, stride_ym,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # y[:, col_s : col_s + N_s] = (x @ W_s.T) * x_scale * w_scale[s] for every slice s (W_s is [N_s, K] fp8)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    s = tl.program_id(2)
    n_s = tl.multiple_of(tl.load(n_tab_ptr + s), 16)
    if pid_n * BLOCK_N >= n_s:
        return
    col0 = tl.multiple_of(tl.load(col_tab_ptr + s), 16)
    w_ptr = tl.multiple_of(tl.load(w_tab_ptr + s).to(tl.pointer_type(x_ptr.dtype.element_ty)), 16)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] + offs_n[None, :] * K

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < n_s), other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    scale = tl.load(x_scale_ptr) * tl.load(w_scale_ptr + s)
    acc = acc * scale
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + col0 + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < n_s))


_TABLES = {}


def _slice_tables(weights, device):
    key = (str(device),) + tuple((w.data_ptr(), w.shape[0]) for w in weights)
    tabs = _TABLES.get(key)
    if tabs is None:
        ns = [w.shape[0] for w in weights]
        cols = [sum(ns[:i]) for i in range(len(ns))]
        tabs = (torch.tensor([w.data_ptr() for w in weights], dtype=torch.int64, device=device),
                torch.tensor(ns, dtype=torch.int32, device=device),
                torch.tensor(cols, dtype=torch.int32, device=device))
        _TABLES[key] = tabs
    return tabs


def entry(x, x_scale, w_q, w_k, w_v, w_scales):
    # fp8 q/k/v projection over separately stored weights; returns bf16 [M, Nq + Nk + Nv]
    weights = [w_q, w_k, w_v]
    M, K = x.shape
    assert all(w.is_contiguous() and w.shape[1] == K for w in weights)
    assert all(w.data_ptr() % 16 == 0 and w.shape[0] % 16 == 0 for w in weights)
    n_total = sum(w.shape[0] for w in weights)
    n_max = max(w.shape[0] for w in weights)
    y = torch.empty((M, n_total), device=x.device, dtype=torch.bfloat16)
    w_tab, n_tab, col_tab = _slice_tables(weights, x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 128
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(n_max, BLOCK_N), len(weights))
    fp8_sliced_linear_kernel[grid](x, x_scale, w_tab, w_scales, n_tab, col_tab, y, M, K,
                                   x.stride(0), y.stride(0),
                                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                   num_warps=8, num_stages=3)
    return y


def reference(x, x_scale, w_q, w_k, w_v, w_scales):
    xf = x.float() * x_scale.float()
    ws = [w.float() * w_scales[i].float() for i, w in enumerate((w_q, w_k, w_v))]
    return (xf @ torch.cat(ws, dim=0).t()).to(torch.bfloat16)


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    M, K, NQ, NKV = case["M"], case["K"], case["NQ"], case["NKV"]
    x = (torch.randn(M, K, generator=g, dtype=torch.float32) * 8.0).to(torch.float8_e4m3fn)
    x_scale = torch.tensor([0.125], dtype=torch.float32)
    ws = [(torch.randn(n, K, generator=g, dtype=torch.float32) * 8.0).to(torch.float8_e4m3fn)
          for n in (NQ, NKV, NKV)]
    w_scales = (torch.rand(3, generator=g, dtype=torch.float32) + 0.5) / (8.0 * K ** 0.5)
    return (x.to(device), x_scale.to(device)) + tuple(w.to(device) for w in ws) + (w_scales.to(device),)


CASES = [
    {"M": 4096, "K": 4096, "NQ": 4096, "NKV": 1024},
    {"M": 3000, "K": 5120, "NQ": 4096, "NKV": 1024},
    {"M": 8192, "K": 2048, "NQ": 2048, "NKV": 512},
    {"M": 2500, "K": 3584, "NQ": 3584, "NKV": 512},
    {"M": 6000, "K": 4096, "NQ": 4096, "NKV": 4096},
    {"M": 5000, "K": 2560, "NQ": 2560, "NKV": 2560},
]
SMALL_CASES = [{"M": 40, "K": 128, "NQ": 64, "NKV": 32}, {"M": 130, "K": 192, "NQ": 160, "NKV": 48}]
TOLERANCES = {"bfloat16": (2e-2, 2e-2)}


def bytes_moved(case):
    M, K, NQ, NKV = case["M"], case["K"], case["NQ"], case["NKV"]
    n = NQ + 2 * NKV
    return M * K + n * K + 2 * M * n


def flops(case):
    M, K, NQ, NKV = case["M"], case["K"], case["NQ"], case["NKV"]
    return 2 * M * K * (NQ + 2 * NKV)
