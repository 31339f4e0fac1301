"""L2 profiling diagnosis: the symptom, from timing against the roofline and Nsight Compute.

Symptoms, not root causes: memory/compute/latency bound, the occupancy limiter, the dominant
warp stall, uncoalesced sectors, shared bank conflicts, local-memory (spill) traffic and the
tail effect. ncu's own rule messages, with their estimated speedups, ride along as evidence on
the finding they support. Metric names: ncu's raw names first, details display names second,
so a report exported either way reads the same.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from kopt.diagnose.launch_facts import material_tail
from kopt.diagnose.ncu import NcuKernel, NcuResult, Rule
from kopt.diagnose.occupancy import LOW_OCCUPANCY_PCT
from kopt.vocabulary import Evidence, Finding

BOUND_FRACTION = 0.6  # of a ceiling: that side of the roofline is the bottleneck
IDLE_FRACTION = 0.3  # below this on both sides: latency bound

# quantity -> names it goes by (raw metric names, then details display names)
NAMES = {
    "duration": ("gpu__time_duration.sum", "Duration"),
    "mem_pct": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory Throughput"),
    "dram_pct": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM Throughput"),
    "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput"),
    "achieved_occ": ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"),
    "theoretical_occ": ("sm__maximum_warps_per_active_cycle_pct", "Theoretical Occupancy"),
    "limit_registers": ("launch__occupancy_limit_registers", "Block Limit Registers"),
    "limit_shared_memory": ("launch__occupancy_limit_shared_mem", "Block Limit Shared Mem"),
    "limit_warps": ("launch__occupancy_limit_warps", "Block Limit Warps"),
    "limit_blocks": ("launch__occupancy_limit_blocks", "Block Limit SM"),
    "registers": ("launch__registers_per_thread", "Registers Per Thread"),
    "waves": ("launch__waves_per_multiprocessor", "Waves Per SM"),
    "grid": ("launch__grid_size", "Grid Size"),
    "sm_count": ("device__attribute_multiprocessor_count", "launch__sm_count", "# SMs"),
    "ld_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",),
    "ld_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",),
    "st_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",),
    "excess_sectors": ("derived__memory_l2_theoretical_sectors_global_excessive",),
    "smem_conflicts_ld": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",),
    "smem_conflicts_st": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",),
    "smem_wavefronts_ld": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",),
    "smem_wavefronts_st": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",),
    # ncu 2025.3 on the H200 reports spills as sass__inst_executed_register_spilling_op_{read,write}
    # (seen in tests/fixtures/ncu/planted_raw.csv); older versions as local ld/st instructions.
    "local_ld": ("sass__inst_executed_register_spilling_op_read", "smsp__sass_inst_executed_op_local_ld.sum",
                 "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"),
    "local_st": ("sass__inst_executed_register_spilling_op_write", "smsp__sass_inst_executed_op_local_st.sum",
                 "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"),
}
_STALL = re.compile(r"^smsp__(?:average_warps_issue_stalled|average_warp_latency_issue_stalled|pcsamp_warps_issue_stalled)"
                    r"_(\w+?)(?:_per_issue_active\.ratio|_per_warp_active\.pct|\.ratio|\.pct|\.sum)?$")
_STALL_MEANING = {
    "long_scoreboard": "waiting on global/local memory (L1TEX) results",
    "lg_throttle": "the global/local memory queue is full (too many narrow memory instructions)",
    "mio_throttle": "the shared-memory/MIO queue is full",
    "short_scoreboard": "waiting on shared memory or MUFU results",
    "math_pipe_throttle": "the math pipes are saturated",
    "wait": "fixed-latency dependencies",
    "barrier": "waiting at __syncthreads barriers",
    "membar": "waiting on memory barriers",
    "not_selected": "ready but not selected (enough parallelism)",
    "selected": "issuing",
    "no_instruction": "instruction cache misses or branch targets",
    "dispatch_stall": "dispatch stalls",
    "drain": "draining memory stores at exit",
    "sleeping": "sleeping",
    "tex_throttle": "the texture queue is full",
    "imc_miss": "constant cache misses",
    "branch_resolving": "branch resolution",
}
# ncu rule -> the finding it supports (matched on the rule name, then the text)
_RULE_MAP = (
    (re.compile(r"UncoalescedShared|SharedMemoryConflicts|bank conflict", re.I), "bank_conflicts"),
    (re.compile(r"UncoalescedGlobal|Uncoalesced|MemoryCacheAccessPattern|bytes transmitted per sector|excessive sectors", re.I),
     "uncoalesced_access"),
    (re.compile(r"local memory|spill", re.I), "register_spill"),
    # ncu's LaunchConfiguration rule is either a partial last wave or a grid smaller than the GPU: its text decides
    (re.compile(r"TailEffect|tail effect|partial wave|A wave of thread blocks", re.I), "tail_effect"),
    (re.compile(r"Occupancy|too small to fully utilize|only \d+ blocks?\b", re.I), "low_occupancy"),
)


# ncu sections whose figures follow from the compiled kernel's resources and the grid alone (L3 computes them too)
_STATIC_SECTION = re.compile(r"Occupancy|Launch", re.I)
_STALL_SECTION = re.compile(r"WarpState|Warp State", re.I)  # where warps wait, with the causes it may have
MINOR_KERNEL_SHARE = 0.1  # a profiled kernel under this share of the range's GPU time is a side show...
MINOR_KERNEL_FLOOR = 0.05  # ... whose findings keep at least this share of their confidence


def _q(metrics: dict[str, Any], key: str) -> float | None:
    for name in NAMES[key]:
        m = metrics.get(name)
        v = m.get("value") if isinstance(m, dict) else m
        if isinstance(v, (int, float)):
            return float(v)
    return None


def _rule(r: Rule | dict) -> Rule:
    return r if isinstance(r, Rule) else Rule(**r)


def _rule_evidence(rule: Rule) -> Evidence:
    speed = f" (est. {rule.speedup_type} speedup {rule.speedup:g}%)" if rule.speedup is not None else ""
    return Evidence("L2", "ncu", f"ncu {rule.type} {rule.name}: {rule.description}{speed}",
                    {"rule": rule.name, "section": rule.section, "type": rule.type, "speedup": rule.speedup,
                     "speedup_type": rule.speedup_type, "static": bool(_STATIC_SECTION.search(rule.section))})


def _ev(source: str, summary: str, **data) -> Evidence:
    return Evidence("L2", source, summary, data)


def profile_findings(metrics: dict[str, Any] | None, rules: Iterable[Rule | dict] | None = None,
                     timing: dict[str, float] | None = None, ceilings: dict[str, float] | None = None,
                     kernel: str = "") -> list[Finding]:
    """Findings (level L2) for one kernel from its ncu metrics and rules, and/or the harness timing.

    timing: seconds, bytes, flops (or gbps, tflops directly); ceilings: gbps, tflops of the device.
    """
    metrics = metrics or {}
    rules = [_rule(r) for r in rules or [] if _rule(r).type in ("OPT", "WRN")]
    who = f"{kernel}: " if kernel else ""
    findings: list[Finding] = []
    findings += _roofline(metrics, timing or {}, ceilings or {}, who)
    findings += _occupancy(metrics, who)
    findings += _memory_patterns(metrics, who)
    used: set[int] = set()
    for f in findings:  # ncu's rules join the finding they support
        for i, rule in enumerate(rules):
            if _rule_target(rule) == f.id:
                f.evidence.append(_rule_evidence(rule))
                f.confidence = round(min(0.85, f.confidence + min(0.1, (rule.speedup or 0) / 500)), 2)
                used.add(i)
    for i, rule in enumerate(rules):  # a rule about a symptom nothing else saw still counts
        target = _rule_target(rule)
        if target == "low_occupancy" and _occupancy_healthy(metrics):
            continue  # e.g. AchievedOccupancy on an 87 %-occupied grid: scheduling noise, not the limiter
        if target == "tail_effect" and (waves := _q(metrics, "waves")) is not None and not material_tail(waves):
            continue  # ncu's launch rule on a last wave that idles little of the whole run
        if _STALL_SECTION.search(rule.section):
            continue  # a stall rule lists what may cause the wait (bank conflicts, occupancy): no measurement of them
        if i not in used and target:
            found = Finding(target, "L2", f"{who}ncu: {rule.description.split('. ')[0][:240]}",
                            _rule_confidence(rule), [_rule_evidence(rule)])
            findings.append(found)
            used.add(i)
    bound = next((f for f in findings if f.id in ("memory_bound", "compute_bound", "latency_bound")), None)
    if bound:
        for i, rule in enumerate(rules):
            if i not in used and rule.speedup:
                bound.evidence.append(_rule_evidence(rule))
    findings.sort(key=lambda f: -f.confidence)
    return findings


def result_findings(result: NcuResult | None, timing: dict[str, dict] | None = None,
                    ceilings: dict[str, float] | None = None) -> list[Finding]:
    """Findings for every profiled kernel; timing per kernel name (or one for all under '*')."""
    timing = timing or {}
    out: list[Finding] = []
    kernels: list[NcuKernel] = result.kernels if result and result.available else []
    durations = [_q(k.metrics, "duration") or 0.0 for k in kernels]
    total = sum(durations)
    for k, duration in zip(kernels, durations):
        found = profile_findings(k.metrics, k.rules, timing.get(k.name) or timing.get("*"), ceilings, k.name)
        share = duration / total if total else 1.0
        if share < MINOR_KERNEL_SHARE:  # e.g. torch's zero-fill of an output before the task's kernel runs
            for f in found:
                f.confidence = round(f.confidence * max(MINOR_KERNEL_FLOOR, share / MINOR_KERNEL_SHARE), 2)
                f.message += f" (this kernel took {share:.1%} of the profiled GPU time)"
        out += found
    if not kernels and "*" in timing:
        out += profile_findings({}, [], timing["*"], ceilings)
    return out


def _rule_target(rule: Rule) -> str | None:
    for rx, fid in _RULE_MAP:
        if rx.search(rule.name):
            return fid
    for rx, fid in _RULE_MAP:
        if rx.search(rule.description):
            return fid
    return None


def _rule_confidence(rule: Rule) -> float:
    if rule.speedup is None:
        return 0.35
    return round(min(0.75, 0.35 + rule.speedup / 100), 2)


def dominant_stall(metrics: dict[str, Any]) -> tuple[str, float, float] | None:
    """(reason, value, share of all stalls) of the largest warp stall reason, 'selected' aside."""
    stalls: dict[str, float] = {}
    for name, m in metrics.items():
        match = _STALL.match(name)
        v = m.get("value") if isinstance(m, dict) else m
        if match and isinstance(v, (int, float)):
            reason = match.group(1).removesuffix("_not_issued")
            if reason not in ("selected",) and not name.endswith("_not_issued"):
                stalls[reason] = max(stalls.get(reason, 0.0), float(v))
    total = sum(stalls.values())
    if not stalls or total <= 0:
        return None
    reason = max(stalls, key=stalls.get)
    return reason, stalls[reason], stalls[reason] / total


def _roofline(metrics: dict[str, Any], timing: dict[str, float], ceilings: dict[str, float], who: str) -> list[Finding]:
    seconds = timing.get("seconds")
    gbps = timing.get("gbps") or (timing["bytes"] / seconds / 1e9 if seconds and timing.get("bytes") else None)
    tflops = timing.get("tflops") or (timing["flops"] / seconds / 1e12 if seconds and timing.get("flops") else None)
    bw = gbps / ceilings["gbps"] if gbps and ceilings.get("gbps") else None
    fl = tflops / ceilings["tflops"] if tflops and ceilings.get("tflops") else None
    mem_pct, sm_pct = _q(metrics, "mem_pct"), _q(metrics, "sm_pct")
    evidence = []
    if bw is not None or fl is not None:
        parts = []
        if bw is not None:
            parts.append(f"{gbps:.0f} GB/s = {bw:.0%} of {ceilings['gbps']:g} GB/s")
        if fl is not None:
            parts.append(f"{tflops:.1f} TFLOP/s = {fl:.0%} of {ceilings['tflops']:g} TFLOP/s")
        evidence.append(_ev("timing", "; ".join(parts), gbps=gbps, tflops=tflops, bw_fraction=bw, flop_fraction=fl,
                            seconds=seconds))
    if mem_pct is not None or sm_pct is not None:
        evidence.append(_ev("ncu", f"Speed of Light: memory {mem_pct if mem_pct is not None else '?'}%, "
                            f"SM {sm_pct if sm_pct is not None else '?'}% of peak", memory_pct=mem_pct, sm_pct=sm_pct))
    mem = bw if bw is not None else (mem_pct / 100 if mem_pct is not None else None)
    comp = fl if fl is not None else (sm_pct / 100 if sm_pct is not None else None)
    if mem is None and comp is None:
        return []
    stall = dominant_stall(metrics)
    stall_text = ""
    if stall:
        reason, value, share = stall
        stall_text = f"; dominant stall {reason} ({_STALL_MEANING.get(reason, reason)}, {share:.0%} of stall cycles)"
        evidence.append(_ev("ncu", f"dominant warp stall: {reason} = {value:g} ({share:.0%} of stalls)",
                            stall=reason, value=value, share=share))
    mem, comp = mem or 0.0, comp or 0.0
    if mem >= BOUND_FRACTION and mem >= comp:
        fid, conf = "memory_bound", 0.45 + 0.2 * min(1.0, mem)
        msg = f"{who}memory bound: {mem:.0%} of peak bandwidth{stall_text}; only moving fewer bytes will help"
    elif comp >= BOUND_FRACTION:
        fid, conf = "compute_bound", 0.45 + 0.2 * min(1.0, comp)
        msg = f"{who}compute bound: {comp:.0%} of peak compute{stall_text}"
    elif mem < IDLE_FRACTION and comp < IDLE_FRACTION:
        fid, conf = "latency_bound", 0.6
        msg = (f"{who}latency bound: {mem:.0%} of peak bandwidth and {comp:.0%} of peak compute; not enough work in "
               f"flight{stall_text}")
    else:
        fid, conf = ("memory_bound" if mem >= comp else "compute_bound"), 0.4
        msg = (f"{who}{'memory' if mem >= comp else 'compute'}-leaning but not saturated: {mem:.0%} of bandwidth, "
               f"{comp:.0%} of compute{stall_text}")
    return [Finding(fid, "L2", msg, round(conf, 2), evidence)]


def _occupancy_healthy(metrics: dict[str, Any]) -> bool:
    """Occupancy is not what limits this kernel: at least LOW_OCCUPANCY_PCT % of the SM's warps are resident (achieved,
    else theoretical) and the grid fills at least one wave. An occupancy rule of ncu then carries no finding of its own
    (on the H200 campaign, recipes chasing such rules alone lost 48 of 51 rounds); it stays evidence."""
    occ = _q(metrics, "achieved_occ")
    occ = _q(metrics, "theoretical_occ") if occ is None else occ
    waves = _q(metrics, "waves")
    return occ is not None and occ >= LOW_OCCUPANCY_PCT and (waves is None or waves >= 1)


def _occupancy(metrics: dict[str, Any], who: str) -> list[Finding]:
    out = []
    theo, ach = _q(metrics, "theoretical_occ"), _q(metrics, "achieved_occ")
    limits = {k.removeprefix("limit_"): v for k in ("limit_registers", "limit_shared_memory", "limit_warps", "limit_blocks")
              if (v := _q(metrics, k)) is not None}
    if theo is not None and theo < LOW_OCCUPANCY_PCT:
        limiter = min(limits, key=limits.get) if limits else "unknown"
        regs = _q(metrics, "registers")
        detail = f" ({regs:g} registers/thread)" if limiter == "registers" and regs else ""
        out.append(Finding("low_occupancy", "L2", f"{who}theoretical occupancy {theo:g}% (achieved "
                           f"{ach if ach is not None else '?'}%), limited by {limiter}{detail}", 0.55,
                           [_ev("ncu", f"occupancy: theoretical {theo}%, achieved {ach}%, block limits {limits}",
                                theoretical=theo, achieved=ach, limits=limits, registers=regs, static=True)]))
    waves, grid, sms = _q(metrics, "waves"), _q(metrics, "grid"), _q(metrics, "sm_count")
    if waves is not None and waves < 1:
        out.append(Finding("low_occupancy", "L2", f"{who}the grid{f' of {grid:g} blocks' if grid else ''} fills only "
                           f"{waves:.0%} of one wave{f' on {sms:g} SMs' if sms else ''}: SMs sit idle", 0.6,
                           [_ev("ncu", f"waves per SM {waves:g}", waves=waves, grid=grid, sm_count=sms, static=True)]))
    elif waves is not None and material_tail(waves):  # the threshold L3's tail_findings uses
        out.append(Finding("tail_effect", "L2", f"{who}{waves:g} waves per SM: the last wave is only "
                           f"{waves % 1:.0%} full, so {1 - (waves % 1):.0%} of the SMs idle through it", 0.45,
                           [_ev("ncu", f"waves per SM {waves:g}", waves=waves, grid=grid, static=True)]))
    return out


def _memory_patterns(metrics: dict[str, Any], who: str) -> list[Finding]:
    out = []
    sectors, requests = _q(metrics, "ld_sectors"), _q(metrics, "ld_requests")
    excess = _q(metrics, "excess_sectors")
    total = (sectors or 0) + (_q(metrics, "st_sectors") or 0)
    if excess and total and excess / total > 0.2:
        per_req = f"; {sectors / requests:.1f} sectors per load request" if sectors and requests else ""
        out.append(Finding("uncoalesced_access", "L2", f"{who}{excess / total:.0%} of global sectors are excessive "
                           f"(uncoalesced){per_req}", round(min(0.75, 0.45 + excess / total / 2), 2),
                           [_ev("ncu", f"{excess:g} excessive of {total:g} global sectors", excessive=excess,
                                sectors=total, requests=requests)]))
    conflicts = (_q(metrics, "smem_conflicts_ld") or 0) + (_q(metrics, "smem_conflicts_st") or 0)
    wavefronts = (_q(metrics, "smem_wavefronts_ld") or 0) + (_q(metrics, "smem_wavefronts_st") or 0)
    if conflicts and wavefronts and conflicts / wavefronts > 0.1:
        out.append(Finding("bank_conflicts", "L2", f"{who}shared-memory bank conflicts: {conflicts:g} conflicts over "
                           f"{wavefronts:g} wavefronts ({conflicts / wavefronts:.0%})", 0.55,
                           [_ev("ncu", "shared bank conflicts", conflicts=conflicts, wavefronts=wavefronts)]))
    local = (_q(metrics, "local_ld") or 0) + (_q(metrics, "local_st") or 0)
    if local > 0:
        out.append(Finding("register_spill", "L2", f"{who}local-memory traffic ({local:g} local load/store "
                           "instructions or bytes): registers spill", 0.6,
                           [_ev("ncu", "local memory traffic", local=local)]))
    return out
