"""L3 IR attribution: which structure in the lowered code explains the slowness, on which
kernel source line, and what a rewrite must satisfy to change it.

Reads only CompiledKernels (TTGIR with locations, PTX with `.loc`, SASS, ptxas usage, the
pass trajectory), so it runs without a GPU. Facts are gathered per source line; Findings
(level "L3") are grouped per root-cause id and kernel, with evidence from every stage.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kopt.diagnose import ir_trajectory
from kopt.diagnose.ir_loc import SourceLoc
from kopt.diagnose.ir_ptx import facts_for, ptx_facts, sass_counts, sass_summary
from kopt.diagnose.ir_ttgir import ELEM_BYTES, Access, Module, Op, analyze_access, parse_module
from kopt.diagnose.occupancy import LOW_OCCUPANCY_WARPS, occupancy
from kopt.harness.compiled import CompiledKernel
from kopt.vocabulary import Evidence, Finding

MEMORY_OPS = ("tt.load", "tt.store", "ttg.async_copy_global_to_local", "tt.atomic_rmw", "tt.atomic_cas")
LOOP_TRIPS = 16  # assumed iterations of a loop whose trip count is a runtime value: loop accesses dominate
TRAFFIC_FULL = 0.25  # an access moving this share of the kernel's bytes (or more) keeps its full confidence
TRAFFIC_FLOOR = 0.2  # the least weight: an access moving almost nothing cannot rank as the root cause
# A shuffle through shared memory writes and reads each byte once at ~7x HBM's bandwidth (H100/H200: ~33 vs ~4.8 TB/s):
# it costs about 0.3 of moving the same bytes to or from global memory, to which the conversion's bytes are compared
SHARED_VS_GLOBAL = 0.3


def _bytes_moved(op: Op) -> float:
    """Bytes one program moves through a memory op: its tile, times the assumed trips of each enclosing loop."""
    return math.prod(op.shape) * ELEM_BYTES.get(op.elem, 4) * LOOP_TRIPS ** len(op.loops)


@dataclass
class L3Report:
    kernels: list[dict[str, Any]] = field(default_factory=list)  # per kernel: resources, occupancy, passes
    lines: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # "file:line" -> facts
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be read, and why

    def facts_at(self, line: int, file: str | None = None) -> list[dict[str, Any]]:
        """Facts on one kernel source line (for `kopt ask --kernel TASK:LINE`)."""
        out = []
        for key, facts in self.lines.items():
            path, _, ln = key.rpartition(":")
            if int(ln) == line and (file is None or Path(path).name == Path(file).name):
                out.extend(facts)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"kernels": self.kernels, "lines": self.lines, "findings": [f.to_dict() for f in self.findings],
                "notes": self.notes}


@dataclass
class _Issue:
    id: str
    kernel: str
    line: int
    message: str
    conditions: list[str]
    evidence: list[Evidence]
    confidence: float


def attribute(compiled: list[CompiledKernel], task_path: str | Path | None = None) -> L3Report:
    """Attribute every compiled kernel's lowered code to its source lines and root causes."""
    report = L3Report()
    issues: list[_Issue] = []
    for ck in compiled:
        if ck.autotune:
            report.notes.append(f"{ck.name}: {ck.autotune}")
        if not ck.asm.get("ttgir"):
            report.notes.append(f"{ck.name}: no TTGIR in the compiled record; L3 needs it")
            continue
        issues.extend(_KernelAttribution(ck, task_path, report).run())
    report.findings = _group(issues)
    return report


def _group(issues: list[_Issue]) -> list[Finding]:
    """One Finding per (id, kernel): the strongest instance speaks, the others add lines and evidence."""
    grouped: dict[tuple[str, str], list[_Issue]] = {}
    for issue in issues:
        grouped.setdefault((issue.id, issue.kernel), []).append(issue)
    findings = []
    for (fid, _), group in grouped.items():
        group.sort(key=lambda i: (-i.confidence, i.line))
        lead = group[0]
        lines = sorted({i.line for i in group})
        message = lead.message
        others = [ln for ln in lines if ln != lead.line]
        if others:
            message += f" (also line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})"
        conditions = list(dict.fromkeys(c for i in group for c in i.conditions))
        evidence = list({(e.source, e.summary, e.location): e for i in group for e in i.evidence}.values())[:12]
        confidence = min(0.95, lead.confidence + 0.03 * (len(group) - 1))
        findings.append(Finding(fid, "L3", message, round(confidence, 2), evidence, lines, conditions))
    findings.sort(key=lambda f: -f.confidence)
    return findings


class _KernelAttribution:
    def __init__(self, ck: CompiledKernel, task_path: str | Path | None, report: L3Report):
        self.ck = ck
        self.report = report
        self.task_path = Path(task_path) if task_path else None
        self.module: Module = parse_module(ck.asm["ttgir"])
        self.ptx = ptx_facts(ck.asm.get("ptx", ""))
        self.sass = sass_summary(sass_counts(ck.asm.get("sass", ""))) if ck.asm.get("sass") else None
        self.num_warps = int(ck.options.get("num_warps", 4))
        self.num_stages = int(ck.options.get("num_stages", 3))
        self.events = ir_trajectory.changes(ck.trajectory, ck.asm["ttgir"]) if ck.trajectory else []
        self._sources: dict[str, list[str]] = {}
        self.memory: dict[int, dict] = {}  # op index -> memory fact
        self.traffic: dict[int, float] = {}  # op index -> bytes a program moves through it (loops weighted)

    def run(self) -> list[_Issue]:
        issues: list[_Issue] = []
        issues += self._memory_ops()
        issues += self._conversions()
        issues += self._dots()
        issues += self._loops()
        issues += self._resources()
        return issues

    # --- helpers ---------------------------------------------------------------------------------

    def _source_line(self, loc: SourceLoc) -> str:
        if loc.file not in self._sources:
            try:
                self._sources[loc.file] = Path(loc.file).read_text().splitlines()
            except OSError:
                self._sources[loc.file] = []
        lines = self._sources[loc.file]
        return lines[loc.line - 1].strip() if 0 < loc.line <= len(lines) else ""

    def _add_fact(self, loc: SourceLoc, fact: dict) -> None:
        fact = {"kernel": self.ck.name, **fact, "source": self._source_line(loc)}
        if loc.via:
            fact["inlined_from_line"] = loc.via[0]
        self.report.lines.setdefault(f"{loc.file}:{loc.line}", []).append(fact)

    def _ev(self, source: str, summary: str, loc: SourceLoc | None = None, **data) -> Evidence:
        return Evidence("L3", source, summary, {"kernel": self.ck.name, **data}, f"{loc.file}:{loc.line}" if loc else None)

    def _trajectory_ev(self, metric: str, what: str) -> list[Evidence]:
        events = [e for e in self.events if e["metric"] == metric]
        if not events:
            return []
        last = events[-1]
        return [self._ev("trajectory", f"{last['pass']} ({last['flag']}) {what}: {last['before']} -> {last['after']}",
                         pass_name=last["pass"], flag=last["flag"], history=events[-4:])]

    def _layout(self, op: Op):
        return self.module.layouts.get(op.layout.lstrip("#")) if op.layout.startswith("#") or op.layout else None

    # --- loads and stores ------------------------------------------------------------------------

    def _memory_ops(self) -> list[_Issue]:
        issues, seen = [], set()
        ops = [op for op in self.module.ops_named(*MEMORY_OPS) if op.shape and op.loc is not None]
        self.traffic = {op.index: _bytes_moved(op) for op in ops}
        for op in self.module.ops_named(*MEMORY_OPS):
            if not op.shape or op.loc is None:
                continue  # scalar accesses have no width to win
            kind = "store" if op.name == "tt.store" else "atomic" if "atomic" in op.name else "load"
            key = (kind, op.loc.line, op.loc.col)
            if key in seen:
                continue  # the pipeliner's prologue copies repeat the loop's
            seen.add(key)
            issues += self._memory_op(op, kind)
        return issues

    def _memory_op(self, op: Op, kind: str) -> list[_Issue]:
        layout = self._layout(op)
        elem = ELEM_BYTES.get(op.elem, 4)
        rank = len(op.shape)
        order = layout.order if layout and layout.order else list(range(rank))[::-1]
        fastest = order[0]
        spt = layout.size_per_thread[fastest] if layout and len(layout.size_per_thread) > fastest else 1
        layout_bytes = min(16, spt * elem)
        acc = analyze_access(self.module, op)
        code = facts_for(self.ptx, op.loc)
        widths = (code.cp_async if op.name.startswith("ttg.async") else code.loads if kind == "load" else code.stores) if code else []
        ptx_bytes = Counter(widths).most_common(1)[0][0] if widths else None
        achieved = ptx_bytes if ptx_bytes is not None else layout_bytes
        per_thread = math.prod(op.shape) * elem / (32 * self.num_warps)
        verb = {"load": "cp.async load" if op.name.startswith("ttg.async") else "tl.load", "store": "tl.store",
                "atomic": "atomic"}[kind]
        ptr = ", ".join(f"`{a}`" for a in acc.base_args) or "a computed pointer"
        fact = {
            "kind": kind, "op": op.name, "col": op.loc.col, "shape": op.shape, "dtype": op.elem,
            "layout": layout.describe() if layout else op.layout, "order": order, "size_per_thread": spt,
            "vector_bytes": achieved, "ptx_bytes": ptx_bytes, "layout_bytes": layout_bytes,
            "thread_bytes": per_thread, "pointer_args": acc.base_args, "contiguous_dims": sorted(acc.contiguous_dims),
            "strided_dims": {str(k): v for k, v in acc.strided_dims.items()},
            "stride_args": {k: {"divisibility": d, "dims": sorted(ds)} for k, (d, ds) in acc.scale_args.items()},
            "mask": acc.has_mask, "mask_bounds": acc.mask_args, "in_loop": bool(op.loops),
            "indirect": acc.indirect, "modulo": acc.modulo, "hints": acc.hints,
        }
        share = self.traffic.get(op.index, 0) / max(1, sum(self.traffic.values()))
        fact["traffic_share"] = round(share, 3)
        self.memory[op.index] = fact
        # an atomic costs its serialization (atomic_contention), not its width: Triton issues one red/atom per element
        narrow = achieved < 16 and kind != "atomic"
        reasons = self._width_reasons(acc, fastest, order, per_thread, achieved) if narrow else []
        fact["why"], fact["causes"] = [r[1] for r in reasons], [r[0] for r in reasons]
        ptx_kind = "cp.async" if op.name.startswith("ttg.async") else "ld" if kind == "load" else "st"
        instr = code.first.get(ptx_kind, "") if code else ""
        where = f"PTX {instr.split()[0]}" if ptx_bytes and instr else f"sizePerThread={layout.size_per_thread if layout else [spt]}"
        fact["summary"] = (f"{verb} of {ptr}: {achieved * 8}-bit per thread ({where}); "
                           f"{layout.describe() if layout else 'no blocked layout'}; {'masked' if acc.has_mask else 'unmasked'}")
        self._add_fact(op.loc, fact)
        if not reasons:
            return []
        evidence = [
            self._ev("ttgir", f"{op.name} {op.shape} {op.elem} in {layout.describe() if layout else op.layout}; "
                     f"pointer args {acc.base_args or '{}'}; stride args "
                     f"{ {k: d for k, (d, _) in acc.scale_args.items()} }; mask bounds {acc.mask_args}",
                     op.loc, op=op.text[:300]),
        ]
        if code and code.excerpt:
            evidence.append(self._ev("ptx", f"{len(widths)} instruction(s) of {ptx_bytes} B each at this line",
                                     op.loc, excerpt=code.excerpt[:2]))
        if self.sass:
            s = self.sass
            evidence.append(self._ev("sass", f"kernel SASS: {s['ldg_128']} LDG.E.128, {s['ldg_64']} LDG.E.64, "
                                     f"{s['ldg_narrow']} narrower LDG; {s['stg_128']} STG.E.128, {s['stg_narrow']} narrower STG",
                                     None, **{k: s[k] for k in ("ldg_128", "ldg_64", "ldg_narrow", "stg_128", "stg_narrow")}))
        evidence += self._trajectory_ev("sizePerThread", "set the per-thread vector layouts")
        weight = min(1.0, max(TRAFFIC_FLOOR, share / TRAFFIC_FULL))
        looped = any(o.loops for o in self.module.ops_named(*MEMORY_OPS) if o.index in self.traffic)
        once = " once per program, outside the kernel's loop" if looped and not op.loops else ""
        head = (f"line {op.loc.line}: {verb} of {ptr} is {achieved * 8}-bit wide ({where}); it moves {share:.0%} of "
                f"the kernel's bytes{once}")
        issues = []
        for rank_i, (fid, why, condition) in enumerate(reasons):
            conf = 0.8 if rank_i == 0 else 0.6
            if not op.loops and kind == "store" and fid != "uncoalesced_access":
                conf -= 0.05
            issues.append(_Issue(fid, self.ck.name, op.loc.line, f"{head}; {why}", [condition], evidence, conf * weight))
        if reasons[0][0] != "non_vectorized_load":
            issues.append(_Issue("non_vectorized_load", self.ck.name, op.loc.line, f"{head}; {reasons[0][1]}",
                                 [r[2] for r in reasons], evidence, 0.55 * weight))
        return issues

    def _width_reasons(self, acc: Access, fastest: int, order: list[int], per_thread: float,
                       achieved: int) -> list[tuple[str, str, str]]:
        """Why a memory op is narrower than 16 bytes, most fundamental first: (finding id, why, condition). When the
        tile gives each thread no more bytes than the op moves, the tile sets the width: alignment, masks and
        modulo could not widen it, so they are not reasons."""
        out = []
        args = self.module.args
        if acc.indirect:
            out.append(("uncoalesced_access", "its offsets are loaded from memory (a gather), so nothing is known "
                        "about their contiguity",
                        "neighbouring lanes must read neighbouring addresses: sort/group the indices, or load a "
                        "contiguous tile and select in registers"))
        if acc.modulo and acc.modulo_dims - {fastest} and fastest not in acc.contiguous_dims:
            lost = min(acc.modulo_dims - {fastest})  # the dim the division took contiguity from; the layout fell back
            out.append(("modulo_indexing", f"its offsets along dim {lost} pass through modulo/division "
                        f"({', '.join(acc.modulo[:2])}), so no dim is known contiguous and the layout's fastest dim "
                        f"fell back to dim {fastest}",
                        "keep modulo/division out of the innermost offsets (load the contiguous tile and split or "
                        "select in registers), or hint tl.max_contiguous/tl.multiple_of on the result"))
        strided = acc.strided_dims.get(fastest, [])
        if strided and fastest not in acc.contiguous_dims:
            runtime = [s for s in strided if s in args]
            scale = runtime[0] if runtime else strided[0]
            what = f"the runtime value `{scale}`" if runtime else f"`{scale}`"
            if not acc.contiguous_dims and len(acc.strided_dims) > 1:
                dims = "; ".join(f"dim {d} by {', '.join(f'`{x}`' for x in v)}" for d, v in sorted(acc.strided_dims.items()))
                why = (f"no dim of its offsets is unit-stride ({dims}), so the layout's fastest dim (dim {fastest}) "
                       "is strided and neighbouring lanes are not known to touch neighbouring addresses")
            else:
                why = (f"its offsets along the layout's fastest dim (dim {fastest}) are multiplied by {what}, so "
                       "neighbouring lanes are not known to touch neighbouring addresses")
            out.append(("uncoalesced_access", why,
                        f"the innermost index must be unit-stride: if `{scale}` is 1 at run time pass a plain int 1 "
                        "(the JIT specializes it to a constant) or make it tl.constexpr; otherwise reorder the tile "
                        "so the unit-stride dim is innermost"))
        elif acc.contiguous_dims and fastest not in acc.contiguous_dims:
            c = min(acc.contiguous_dims)
            out.append(("uncoalesced_access", f"it is contiguous along dim {c} but the layout's fastest dim is "
                        f"{fastest} (order={order})",
                        "the layout order must put the contiguous dim first: load the tile in memory order and "
                        "transpose in registers (tl.trans) or through shared memory"))
        for name, div in acc.base_args.items():
            if div < 16:
                out.append(("misaligned_access", f"the pointer `{name}` is not known 16-byte aligned "
                            "(no tt.divisibility=16 on the argument)",
                            f"`{name}` must be known 16-byte aligned: pass an aligned tensor (a view starting at an "
                            "offset breaks it) so the JIT marks it divisible by 16, or assert tl.multiple_of"))
        if acc.loaded_scalars and not acc.indirect and fastest in acc.contiguous_dims:
            lines = sorted(set(acc.loaded_scalars))
            where = f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
            out.append(("misaligned_access", f"its base pointer or stride is read from memory ({where}), so "
                        "nothing is known of its alignment and the contiguous dim cannot be vectorized",
                        "the loaded pointer and strides must be known 16-byte aligned: wrap them in "
                        "tl.multiple_of(..., 16) where that holds (or pass them as kernel arguments)"))
        for name, (div, dims) in acc.scale_args.items():
            if div < 16 and fastest not in dims and acc.contiguous_dims:
                out.append(("misaligned_access", f"the stride `{name}` is not known divisible by 16, so each row "
                            "start is not known 16-byte aligned",
                            f"the stride must be known divisible by 16: pass it as a multiple of 16 (pad the rows) "
                            f"or add tl.multiple_of({name}, 16) where that holds"))
        for name, div in acc.mask_args.items():
            if div < 16:
                out.append(("masked_access", f"the mask compares against `{name}`, which is not known divisible by "
                            "16, so the mask may change inside a vector",
                            f"the mask bound must be known divisible by 16: pad `{name}` to a multiple of 16, split "
                            "off an unmasked main body, or hint tl.multiple_of when true"))
        if acc.mask_ranges:
            out.append(("masked_access", "its mask compares two index ranges (a triangular or causal mask), which can "
                        "change between any two neighbouring elements",
                        "mask the load by bounds only (constant over 16 elements) and apply the element-wise "
                        "condition to the loaded values with tl.where, or give the diagonal tiles their own path"))
        if acc.modulo and fastest in acc.modulo_dims:  # modulo on another dim leaves the vector dim contiguous
            out.append(("modulo_indexing", f"its offsets use modulo/division ({', '.join(acc.modulo[:2])}), which "
                        "the contiguity analysis cannot see through",
                        "keep modulo/division out of the innermost offsets (mask instead of wrapping), or hint "
                        "tl.max_contiguous/tl.multiple_of on the result"))
        if per_thread < 16:
            small = ("small_block", f"the tile gives each thread only {per_thread:g} bytes",
                     "each thread must hold >= 16 contiguous bytes: grow the block or lower num_warps")
            out = [small, *(r for r in out if r[0] == "uncoalesced_access")] if per_thread <= achieved else [*out, small]
        if not out:
            out.append(("non_vectorized_load", "the blocked layout gives each thread fewer than 16 contiguous bytes",
                        "the contiguous dim must be divisible by 16 bytes per thread: tl.max_contiguous / "
                        "tl.multiple_of on the offsets"))
        return out

    # --- layout conversions ----------------------------------------------------------------------

    def _conversions(self) -> list[_Issue]:
        issues = []
        for op in self.module.ops_named("ttg.convert_layout"):
            if op.loc is None:
                continue
            names = re.findall(r"#([\w]+)>", op.text.rsplit(" : ", 1)[-1])
            src, dst = (names + ["?", "?"])[:2]
            src_l, dst_l = self.module.layouts.get(src), self.module.layouts.get(dst)
            nbytes = math.prod(op.shape) * ELEM_BYTES.get(op.elem, 4) if op.shape else 0
            code = facts_for(self.ptx, op.loc)
            via_smem = bool(code and code.shared)
            fact = {"kind": "convert_layout", "from": src_l.describe() if src_l else src,
                    "to": dst_l.describe() if dst_l else dst, "shape": op.shape, "dtype": op.elem,
                    "tensor_bytes": nbytes, "shared_ops_at_line": code.shared if code else None,
                    "in_loop": bool(op.loops),
                    "summary": f"convert_layout #{src} -> #{dst} of {op.shape} {op.elem} ({nbytes} B)"
                               f"{' inside a loop' if op.loops else ''}"}
            self._add_fact(op.loc, fact)
            epilogue = src_l is not None and src_l.kind.endswith("mma") and not op.loops
            conf = 0.7 if op.loops else 0.3 if epilogue else 0.55
            moved = SHARED_VS_GLOBAL * nbytes * LOOP_TRIPS ** len(op.loops) / max(1, sum(self.traffic.values()))
            conf *= min(1.0, max(TRAFFIC_FLOOR, moved / TRAFFIC_FULL))  # a shuffle of a few bytes is no root cause
            fact["traffic_ratio"] = round(moved, 3)
            evidence = [self._ev("ttgir", fact["summary"] + f"; from {fact['from']} to {fact['to']}", op.loc,
                                 op=op.text[:300])]
            if code and code.excerpt:
                evidence.append(self._ev("ptx", f"{code.shared} shared-memory instructions at this line", op.loc,
                                         excerpt=code.excerpt[:2]))
            evidence += self._trajectory_ev("convert_layout", "changed the number of convert_layout ops")
            msg = (f"line {op.loc.line}: ttg.convert_layout #{src} -> #{dst} shuffles a {'x'.join(map(str, op.shape))} "
                   f"{op.elem} tensor ({nbytes} B){' through shared memory' if via_smem else ''}"
                   f"{' on every loop iteration' if op.loops else ''} (kernel shared memory {self.ck.shared_bytes} B)")
            issues.append(_Issue("layout_conversion", self.ck.name, op.loc.line, msg,
                                 ["produce each value in the layout its consumer needs (e.g. store in the layout it "
                                  "was loaded, or read the transposed operand directly from memory)",
                                  "keep conversions out of loops"], evidence, conf))
        return issues

    # --- dots ------------------------------------------------------------------------------------

    def _dots(self) -> list[_Issue]:
        issues = []
        for op in self.module.ops_named("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma"):
            if op.loc is None:
                continue
            code = facts_for(self.ptx, op.loc)
            precision = re.search(r"inputPrecision = (\w+)", op.text)
            if op.name == "tt.dot":
                result = re.search(r"-> tensor<[^,>]*, #(\w+)>", op.text)
                layout = self.module.layouts.get(result.group(1)) if result else None
                mma = layout is not None and layout.kind == "nvidia_mma"
                lowering = "mma.sync (mma v2)" if mma else "FMA (no tensor cores)"
            else:
                lowering = "wgmma (warp-group MMA, sm_90)" if op.name == "ttng.warp_group_dot" else "tcgen05 MMA"
            prec = precision.group(1) if precision else ("ieee" if op.name == "tt.dot" else "default")
            operand = re.search(r"(?:tensor|memdesc)<[0-9x]+x(\w+)", op.text.rsplit(" : ", 1)[-1])
            elem = operand.group(1) if operand else op.elem
            fact = {"kind": "dot", "op": op.name, "lowering": lowering, "operand_dtype": elem,
                    "input_precision": prec, "in_loop": bool(op.loops),
                    "ptx": {"wgmma": code.wgmma, "mma_sync": code.mma_sync, "fma": code.fma} if code else None,
                    "summary": f"dot on {elem} lowered to {lowering}"}
            self._add_fact(op.loc, fact)
            if not lowering.startswith("FMA"):
                continue
            evidence = [self._ev("ttgir", f"{op.name} survived to TTGIR (not converted to an MMA op); "
                                 f"operands {elem}, inputPrecision={prec}", op.loc, op=op.text[:300])]
            if code:
                evidence.append(self._ev("ptx", f"{code.fma} fma.rn, {code.wgmma} wgmma, {code.mma_sync} mma.sync "
                                         "at this line", op.loc, excerpt=code.excerpt[:2]))
            if self.ck.trajectory and ir_trajectory.ran(self.ck.trajectory, "tritongpu-accelerate-matmul"):
                evidence.append(self._ev("trajectory", "TritonGPUAccelerateMatmul (tritongpu-accelerate-matmul) "
                                         "ran and left this dot on FMA", pass_name="TritonGPUAccelerateMatmul",
                                         flag="tritongpu-accelerate-matmul"))
            if elem == "f32" and prec == "ieee":
                issues.append(_Issue("fp32_dot_ieee", self.ck.name, op.loc.line,
                                     f"line {op.loc.line}: tl.dot on fp32 with input_precision=\"ieee\" is lowered to "
                                     "FMA; tensor cores sit idle",
                                     ["use input_precision=\"tf32\" (or \"tf32x3\" for near-fp32 accuracy) if the "
                                      "tolerance allows, or cast operands to bf16/fp16"], evidence, 0.85))
            issues.append(_Issue("no_tensor_cores", self.ck.name, op.loc.line,
                                 f"line {op.loc.line}: tl.dot on {elem} runs on FMA units, not tensor cores",
                                 ["tensor cores need fp16/bf16/fp8 (or tf32) operands and tile dims of at least 16 "
                                  "(M >= 64 and num_warps a multiple of 4 for wgmma)"], evidence, 0.7))
        return issues

    # --- loops and pipelining --------------------------------------------------------------------

    def _loops(self) -> list[_Issue]:
        issues = []
        for loop in self.module.ops_named("scf.for"):
            inside = [op for op in self.module.ops if loop.index in op.loops]
            loads = [op for op in inside if op.name == "tt.load" and op.shape]
            asyncs = [op for op in inside if op.name in ("ttg.async_copy_global_to_local",
                                                         "ttng.async_tma_copy_global_to_local", "tt.descriptor_load")]
            has_dot = any(op.name in ("tt.dot", "ttng.warp_group_dot") for op in inside)
            anchor = (loads or asyncs or [loop])[0].loc or loop.loc
            if anchor is None:
                continue
            pipelined = bool(asyncs)
            fact = {"kind": "loop", "loads": len(loads), "async_copies": len(asyncs), "has_dot": has_dot,
                    "pipelined": pipelined, "num_stages": self.num_stages,
                    "summary": f"loop with {len(loads)} plain tensor load(s), {len(asyncs)} async copies"
                               f"{' and a dot' if has_dot else ''}"}
            if loop.loc:
                self._add_fact(loop.loc, fact)
            if not loads:
                continue
            why, conditions = [], []
            if pipelined:
                why.append(f"{len(loads)} load(s) stay synchronous while the others use async copies")
            if self.num_stages <= 1:
                why.append(f"num_stages={self.num_stages} turns the pipeliner off")
                conditions.append("num_stages >= 2 (3-4 on sm_90 for matmul-like loops)")
            narrow = [self.memory[op.index] for op in loads
                      if op.index in self.memory and self.memory[op.index]["vector_bytes"] < 4]
            if narrow:
                why.append(f"{len(narrow)} of its loads move < 4 contiguous bytes per thread, too narrow for cp.async")
                conditions.append("each pipelined load needs >= 4 (ideally 16) contiguous, aligned bytes per thread: "
                                  "unit-stride innermost dim and 16-divisible strides")
            if not why or why == [why[0]] and pipelined and not narrow and self.num_stages > 1:
                why.append("the pipeliner did not schedule them")
                conditions.append("loads must feed a dot or have latency assigned (tritongpu-assign-latencies); "
                                  "loop bounds and steps must be loop-invariant")
            evidence = [self._ev("ttgir", f"scf.for holds {len(loads)} plain tt.load and {len(asyncs)} async copies "
                                 "(ttg.async_copy_global_to_local / TMA)", loop.loc, loads=[o.text[:160] for o in loads[:3]])]
            if self.sass:
                evidence.append(self._ev("sass", f"kernel SASS: {self.sass['ldgsts']} LDGSTS (cp.async), "
                                         f"{self.sass['tma']} TMA copies", None))
            if self.ck.trajectory and ir_trajectory.ran(self.ck.trajectory, "tritongpu-pipeline"):
                evidence.append(self._ev("trajectory", "TritonGPUPipeline (tritongpu-pipeline) ran and introduced no "
                                         "async copies for this loop", pass_name="TritonGPUPipeline",
                                         flag="tritongpu-pipeline"))
            lines = sorted({op.loc.line for op in loads if op.loc})
            msg = (f"line {anchor.line}: the loop's loads (line{'s' if len(lines) > 1 else ''} "
                   f"{', '.join(map(str, lines))}) are not software-pipelined: {'; '.join(why)}")
            issues.append(_Issue("no_software_pipelining", self.ck.name, anchor.line, msg, conditions, evidence,
                                 (0.75 if has_dot else 0.4) - (0.15 if pipelined else 0.0)))
        return issues

    # --- registers, spills, shared memory, occupancy ---------------------------------------------

    def _resources(self) -> list[_Issue]:
        ck = self.ck
        cap = int(re.sub(r"\D", "", ck.target) or 90)
        occ = occupancy(self.num_warps, ck.registers, ck.shared_bytes, cap)
        s = self.sass or {}
        info = {"kernel": ck.name, "target": ck.target, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "registers": ck.registers, "spill_stores": ck.spill_stores, "spill_loads": ck.spill_loads,
                "local_bytes": ck.local_bytes, "shared_bytes": ck.shared_bytes, "occupancy": occ.to_dict(),
                "sass": s, "trajectory": self.events}
        self.report.kernels.append(info)
        def_loc = f"{ck.source_file}:{ck.first_line}"
        issues = []
        spill = ck.spill_stores + ck.spill_loads
        if spill or s.get("ldl", 0) + s.get("stl", 0):
            evidence = [Evidence("L3", "sass", f"{s.get('stl', 0)} STL and {s.get('ldl', 0)} LDL (local memory)",
                                 {"kernel": ck.name, "stl": s.get("stl", 0), "ldl": s.get("ldl", 0)}, def_loc)]
            if ck.ptxas_log:
                evidence.append(Evidence("L3", "compile_log", ck.ptxas_log.strip().splitlines()[-1][:200], {"kernel": ck.name}, def_loc))
            issues.append(_Issue("register_spill", ck.name, ck.first_line,
                                 f"{ck.name} spills registers: {ck.spill_stores} B spill stores, {ck.spill_loads} B "
                                 f"spill loads ({ck.registers or '?'} registers/thread, {self.num_warps} warps)",
                                 ["cut live values per thread: smaller tiles (BLOCK_M/N/K), fewer stages, more warps "
                                  "per tile, or narrower accumulators"], evidence, 0.8 if spill >= 64 else 0.6))
        if occ.warps_per_sm < LOW_OCCUPANCY_WARPS and (ck.registers or ck.shared_bytes):
            cause = {"registers": f"{ck.registers} registers/thread x {self.num_warps * 32} threads",
                     "shared_memory": f"{ck.shared_bytes} B shared memory per block",
                     "warps": f"{self.num_warps} warps per block", "blocks": "the 32-blocks/SM cap"}[occ.limiter]
            fix = {"registers": "fewer registers per thread (smaller tiles, fewer live values) or maxnreg",
                   "shared_memory": "less shared memory per block (fewer stages or smaller BLOCK_K)",
                   "warps": "more warps per block", "blocks": "bigger blocks"}[occ.limiter]
            issues.append(_Issue("low_occupancy", ck.name, ck.first_line,
                                 f"{ck.name}: {occ.warps_per_sm} warps/SM resident ({occ.occupancy:.0%} occupancy) "
                                 f"on {ck.target}, limited by {occ.limiter} ({cause})", [fix],
                                 [Evidence("L3", "sass" if ck.registers else "ttgir",
                                           f"occupancy {occ.blocks_per_sm} blocks x {self.num_warps} warps; limits "
                                           f"{occ.limits}", {"kernel": ck.name, **occ.to_dict()}, def_loc)],
                                 0.35 if self.module.ops_named("ttng.warp_group_dot") else 0.5))
        return issues
