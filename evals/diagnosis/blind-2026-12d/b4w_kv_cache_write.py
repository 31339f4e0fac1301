import torch, triton, triton.language as tl


@triton.jit
def kv_cache_write_kernel(k_ptr, v_ptr, kc_ptr, vc_ptr, slot_ptr, H,
                          stride_kt, stride_kh, stride_vt, stride_vh,
                          stride_cs, stride_ch,
                          HEAD_DIM: tl.constexpr):
    # scatter one (token, head) of the new keys/values into its cache slot
    pid = tl.program_id(0)
    t = pid // H
    h = pid % H
    slot = tl.load(slot_ptr + t)
    d = tl.arange(0, HEAD_DIM)
    kv = tl.load(k_ptr + t * stride_kt + h * stride_kh + d)
    vv = tl.load(v_ptr + t * stride_vt + h * stride_vh + d)
    dst = slot * stride_cs + h * stride_ch + d
    tl.store(kc_ptr + dst, kv)
    tl.store(vc_ptr + dst, vv)


def entry(key, value, k_cache, v_cache, slot_mapping):
    T, H, D = key.shape
    kv_cache_write_kernel[(T * H,)](key, value, k_cache, v_cache, slot_mapping, H,
                                    key.stride(0), key.stride(1), value.stride(0), value.stride(1),
                                    k_cache.stride(0), k_cache.stride(1),
                                    HEAD_DIM=D)
    return k_cache, v_cache


def reference(key, value, k_cache, v_cache, slot_mapping):
    kc = k_cache.clone()
    vc = v_cache.clone()
    kc[slot_mapping] = key
    vc[slot_mapping] = value
    return kc, vc


def make_inputs(case, device, seed):
    g = torch.Generator().manual_seed(seed)
    T, H, D = case["T"], case["H"], case["D"]
    n_slots = T + T // 4 + 16
    key = torch.randn(T, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    value = torch.randn(T, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    k_cache = torch.randn(n_slots, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    v_cache = torch.randn(n_slots, H, D, generator=g, dtype=torch.float32).to(torch.bfloat16)
    slot_mapping = torch.randperm(n_slots, generator=g)[:T].to(torch.int64)
    return (key.to(device), value.to(device), k_cache.to(device), v_cache.to(device), slot_mapping.to(device))


CASES = [
    {"T": 65536, "H": 8, "D": 128},
    {"T": 32768, "H": 8, "D": 128},
    {"T": 100000, "H": 8, "D": 64},
    {"T": 16384, "H": 32, "D": 128},
    {"T": 24000, "H": 12, "D": 128},
    {"T": 50000, "H": 16, "D": 64},
]
SMALL_CASES = [{"T": 13, "H": 3, "D": 64}, {"T": 9, "H": 8, "D": 32}]


def bytes_moved(case):
    T, H, D = case["T"], case["H"], case["D"]
    return 2 * 2 * T * H * D * 2 + T * 8


def flops(case):
    return 0
