"""How many warps an SM can keep resident given a kernel's registers, shared memory and
warps per block (the CUDA occupancy rules, with the limits of the target)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# Per-SM limits: registers, shared memory usable by blocks (bytes), warps, blocks,
# shared memory reserved per block, register allocation unit (per warp), max regs per thread.
SM_LIMITS = {
    90: dict(regs=65536, smem=233472, warps=64, blocks=32, smem_reserved=1024, reg_unit=256, max_regs=255),
    80: dict(regs=65536, smem=167936, warps=64, blocks=32, smem_reserved=1024, reg_unit=256, max_regs=255),
    89: dict(regs=65536, smem=102400, warps=48, blocks=24, smem_reserved=1024, reg_unit=256, max_regs=255),
}

LOW_OCCUPANCY_WARPS = 16  # resident warps per SM below which latency hiding suffers
LOW_OCCUPANCY_PCT = 100 * LOW_OCCUPANCY_WARPS / SM_LIMITS[90]["warps"]  # the same as a profiler reports it (25 %)


@dataclass
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # resident warps / max warps
    limiter: str  # registers | shared_memory | warps | blocks
    limits: dict[str, int]  # blocks per SM each resource allows

    def to_dict(self) -> dict:
        return asdict(self)


def occupancy(num_warps: int, registers: int | None, shared_bytes: int, capability: int = 90) -> Occupancy:
    """Resident blocks per SM and the resource that bounds them."""
    lim = SM_LIMITS.get(capability, SM_LIMITS[90])
    limits = {"warps": lim["warps"] // max(num_warps, 1), "blocks": lim["blocks"]}
    if registers:
        per_warp = -(-registers * 32 // lim["reg_unit"]) * lim["reg_unit"]
        limits["registers"] = (lim["regs"] // per_warp) // max(num_warps, 1)
    if shared_bytes:
        limits["shared_memory"] = lim["smem"] // (shared_bytes + lim["smem_reserved"])
    limiter = min(limits, key=lambda k: (limits[k], k not in ("warps", "blocks")))  # ties: the hardware cap
    blocks = limits[limiter]
    warps = blocks * num_warps
    return Occupancy(blocks, warps, warps / lim["warps"], limiter, limits)
