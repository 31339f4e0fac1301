"""Which compiler pass introduced or removed a structure, read off the pass-by-pass dump.

Each trajectory entry is (pass, IR *before* that pass), so a change between entry i and
entry i+1 was made by pass i; the change after the last TTGIR entry is read against the
final TTGIR. Lowering to LLVM ends the comparison: it removes every TTGIR op at once.
"""

from __future__ import annotations

import re

# The passes L3 names most often; anything else is turned into its flag by rule.
_FLAGS = {
    "TritonGPUF32DotTC": "tritongpu-F32DotTC",
    "ConvertTritonToTritonGPU": "convert-triton-to-tritongpu",
    "ConvertTritonGPUToLLVM": "convert-triton-gpu-to-llvm",
    "TritonNvidiaGPUTMALoweringPass": "triton-nvidia-tma-lowering",
    "TritonNvidiaGPUMMALoweringPass": "triton-nvidia-mma-lowering",
    "TritonGPUProxyFenceInsertion": "triton-nvidia-gpu-proxy-fence-insertion",
    "TritonGPUFenceInsertion": "triton-nvidia-gpu-fence-insertion",
    "TritonGPUPlanCTAPass": "triton-nvidia-gpu-plan-cta",
    "TritonLoopInvariantCodeMotion": "triton-licm",
    "TritonCombineOps": "triton-combine",
}

METRICS = {
    "convert_layout": re.compile(r"\bttg\.convert_layout\b"),
    "async_copy": re.compile(r"\b(?:ttg\.async_copy_global_to_local|ttng\.async_tma_copy_global_to_local)\b"),
    "warp_group_dot": re.compile(r"\bttng\.warp_group_dot\b(?!_wait)"),
    "mma_layout": re.compile(r"#ttg\.nvidia_mma<"),
    "local_alloc": re.compile(r"\bttg\.local_alloc\b"),
}
_SPT = re.compile(r"sizePerThread = \[([^\]]*)\]")


def pass_flag(name: str) -> str:
    """'TritonGPUCoalesce' -> 'tritongpu-coalesce' (the name pass notes use in `pass:`)."""
    if "(" in name and name.endswith(")"):
        return name[name.index("(") + 1:-1]
    if name in _FLAGS:
        return _FLAGS[name]
    prefix = ""
    for p, flag in (("TritonGPU", "tritongpu-"), ("TritonNvidiaGPU", "triton-nvidia-"), ("Triton", "triton-")):
        if name.startswith(p):
            prefix, name = flag, name[len(p):]
            break
    kebab = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()
    return prefix + kebab.removesuffix("-pass")


def measure(ir: str) -> dict[str, object]:
    out: dict[str, object] = {k: len(rx.findall(ir)) for k, rx in METRICS.items()}
    out["sizePerThread"] = sorted(set(_SPT.findall(ir)))
    return out


def _is_llvm(ir: str) -> bool:
    return "llvm.func" in ir


def changes(trajectory: list[tuple[str, str]], final_ttgir: str | None = None) -> list[dict]:
    """[{pass, flag, metric, before, after}] for every TTIR/TTGIR-level change a pass made, in order."""
    steps: list[tuple[str, str]] = []
    lowered = False
    for name, ir in trajectory:
        if _is_llvm(ir):
            lowered = True
            break
        if "module" in ir[:2000]:  # function-scoped dumps lack the layout aliases; skip them
            steps.append((name, ir))
    if not lowered and final_ttgir is not None:
        steps.append(("(final)", final_ttgir))
    events: list[dict] = []
    for (name, ir), (_, nxt) in zip(steps, steps[1:]):
        before, after = measure(ir), measure(nxt)
        for metric in before:
            if before[metric] != after[metric]:
                events.append({"pass": name, "flag": pass_flag(name), "metric": metric,
                               "before": before[metric], "after": after[metric]})
    return events


def ran(trajectory: list[tuple[str, str]], flag: str) -> bool:
    return any(pass_flag(name) == flag for name, _ in trajectory)
