import torch
import triton
import triton.language as tl


# Discounted returns for a batch of rollouts (RL):
#   G[t] = r[t] + gamma * (1 - done[t]) * G[t + 1],  G[T] = 0
# rewards / dones: [n_envs, T] float32, one rollout per row.
@triton.jit
def _discounted_returns_kernel(rew_ptr, done_ptr, out_ptr, T, stride_row, gamma):
    row = tl.program_id(0)
    base = row * stride_row
    g = tl.zeros([], dtype=tl.float32)
    for i in range(0, T):
        t = T - 1 - i
        r = tl.load(rew_ptr + base + t)
        d = tl.load(done_ptr + base + t)
        g = r + gamma * (1.0 - d) * g
        tl.store(out_ptr + base + t, g)


def entry(rewards, dones, gamma):
    n, T = rewards.shape
    out = torch.empty_like(rewards)
    _discounted_returns_kernel[(n,)](rewards, dones, out, T, rewards.stride(0), float(gamma))
    return out


def reference(rewards, dones, gamma):
    r = rewards.double()
    nd = 1.0 - dones.double()
    out = torch.empty_like(r)
    g = torch.zeros(r.shape[0], dtype=torch.float64, device=r.device)
    for t in range(r.shape[1] - 1, -1, -1):
        g = r[:, t] + gamma * nd[:, t] * g
        out[:, t] = g
    return out.float()


def make_inputs(case, device, seed):
    gen = torch.Generator().manual_seed(seed)
    n, T = case["n_envs"], case["T"]
    rewards = torch.randn((n, T), generator=gen, dtype=torch.float32)
    dones = (torch.rand((n, T), generator=gen) < 0.01).float()
    return rewards.to(device), dones.to(device), case["gamma"]


CASES = [
    {"n_envs": 2048, "T": 8192, "gamma": 0.99},
    {"n_envs": 1024, "T": 16384, "gamma": 0.995},
    {"n_envs": 4096, "T": 3000, "gamma": 0.99},
    {"n_envs": 1536, "T": 10000, "gamma": 0.98},
    {"n_envs": 8192, "T": 1500, "gamma": 0.99},
    {"n_envs": 3000, "T": 5000, "gamma": 0.997},
]

SMALL_CASES = [
    {"n_envs": 4, "T": 300, "gamma": 0.99},
    {"n_envs": 3, "T": 1100, "gamma": 0.95},
]

TOLERANCES = {"float32": (1e-3, 1e-4)}


def bytes_moved(case):
    return case["n_envs"] * case["T"] * 12


def flops(case):
    return case["n_envs"] * case["T"] * 3
