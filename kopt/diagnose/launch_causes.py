"""Mechanisms behind the launch facts (launch_facts.py): what the launches of one entry say about how the work is
split, read from the captured launches and the task's source together.

- unfused_ops: the entry's kernels re-read an input or round-trip an intermediate through memory for a large share
  of their bytes, its torch ops move a large share of the bytes outside the kernels, or it launches so many times
  that the fixed cost of the launches outweighs the time of their bytes;
- serial_reduction: a tiny grid whose kernel walks a runtime-length axis whole in every program;
- a grid of one program per item (token, head, row) that no block size can coarsen: too_many_programs explains
  the small tiles it compiles to;
- register_spill before compiling: a case whose largest tile, at its own block sizes, gives each thread more values
  than a thread has registers;
- no_software_pipelining before compiling: a dot's K loop launched with num_stages=1.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

from kopt.diagnose.l1_detectors import serial_loops
from kopt.diagnose.l1_source import KernelDef, KernelScan, TaskSource, const_value, loops_of, names_in, tl_name
from kopt.diagnose.launch_facts import CaseLaunch, LaunchFacts, _case_label, _lines, breadth
from kopt.vocabulary import FINDING_IDS, Evidence, Finding

MANY_LAUNCHES = 16  # launches of one case before their fixed cost is worth weighing against the bytes
LAUNCH_SECONDS = 4e-6  # fixed cost of one launch (host launch path + GPU kernel start), a conservative floor
HBM_BYTES_PER_SECOND = 3.35e12  # H100 SXM, the slowest Hopper part: memory time is not underestimated
UNFUSED_CONFIDENCE = 0.85
EXTRA_TRAFFIC = 0.25  # share of a case's bytes that re-reads or intermediates must reach to be worth a finding
GRID_SHAPE = ["low_occupancy", "too_many_programs", "tail_effect"]
ALL_BUT_FUSION = sorted(FINDING_IDS.keys() - {"unfused_ops", "compile_failure"})
REGISTERS_PER_THREAD = 255  # a thread's register file; a tile past it per thread must spill to local memory
SPILL_CONFIDENCE = 0.7
UNPIPELINED_CONFIDENCE = 0.75
SERIAL_SHARE = 0.95  # serial_reduction beside a tiny grid: its confidence relative to the tiny grid's
SERIAL_LEADS = 1.05  # ... when the grid is one program per item: only splitting the walked axis adds programs


def _module(path: str) -> TaskSource | None:
    """The task file as L1 reads it, or None when it cannot be read."""
    try:
        return TaskSource(ast.parse(Path(path).read_text()))
    except (OSError, SyntaxError, ValueError):
        return None


def _traffic(facts: LaunchFacts, case: int) -> tuple[int, int, list[str], set[str], set[str], set[str]]:
    """(bytes the case's launches move, bytes its inputs and outputs hold, the large avoidable transfers, the kernels
    re-reading an input, the kernels writing an intermediate, the kernels reading one back).

    Each launch moves the tensors it loads through and stores through. The case must read its inputs once and
    write its outputs once; an input read by several launches, or an intermediate one launch writes and another
    reads back, is traffic one kernel keeping the data on chip would not pay."""
    reads: dict[tuple, list[CaseLaunch]] = {}
    writes: dict[tuple, list[CaseLaunch]] = {}
    size: dict[tuple, int] = {}
    for l in (l for l in facts.launches if l.case == case):
        for arg, (key, nbytes) in l.tensors.items():
            size[key] = nbytes
            for accessed, by in ((l.reads, reads), (l.writes, writes)):
                if arg in accessed:
                    by.setdefault(key, []).append(l)
    moved = sum(size[k] * len(ls) for by in (reads, writes) for k, ls in by.items())
    inputs, outputs = facts.inputs.get(case, {}), facts.outputs.get(case, {})
    needed = sum(inputs.values()) + sum(outputs.values())
    what, rereaders, writers, readers = [], set(), set(), set()
    for key, ls in sorted(reads.items(), key=lambda kv: -size[kv[0]]):
        if size[key] < EXTRA_TRAFFIC * needed:
            continue
        if key[0] in inputs and len(ls) > 1:
            what.append(f"an input of {size[key] / 1e6:.0f} MB is read by {len(ls)} launches ({', '.join(l.kernel for l in ls)})")
            rereaders |= {l.kernel for l in ls}
        elif key[0] not in inputs and key[0] not in outputs and key in writes:
            what.append(f"an intermediate of {size[key] / 1e6:.0f} MB is written by {writes[key][0].kernel} and read "
                        f"back by {', '.join(sorted({l.kernel for l in ls}))}")
            writers |= {l.kernel for l in writes[key]}
            readers |= {l.kernel for l in ls}
    return moved, needed, what, rereaders, writers, readers - writers


def entity_grid(path: str, kernel: str) -> bool:
    """Whether every launch of `kernel` in the task file sizes its grid from the problem alone: no tile constexpr
    of the launch (by name, by the names its value is computed from, or by its literal value) appears in the grid,
    so the grid is one program per token, head or row and the tile is whatever that item holds."""
    module = _module(path)
    tiles = grid_tiles(module.kernels.get(kernel)) if module else None
    return tiles is not None and not tiles


def grid_tiles(definition: KernelDef | None) -> list[tuple[str, Any, int]] | None:
    """The tile constexprs the grids of a kernel's launches count (name, value where the entry fixes it, launch
    line), or None when the kernel is unknown, never launched, or a launch's grid cannot be read."""
    if definition is None or not definition.launches:
        return None
    tiles = []
    for site in definition.launches:
        if site.grid is None:
            return None
        words = names_in(site.grid) | {n.value for n in ast.walk(site.grid) if isinstance(n, ast.Constant)}
        bound = dict(zip(definition.params, site.node.args)) | {k.arg: k.value for k in site.node.keywords if k.arg}
        for name, value in bound.items():
            fixed = const_value(value, site.env)
            if name in definition.constexprs and (name in words or names_in(value) & words
                                                   or fixed in words - {0, 1, None}):
                tiles.append((name, fixed, site.node.lineno))
    return tiles


def tiled_programs_findings(many: Finding, kernel: str, path: str) -> list[Finding]:
    """small_block beside too_many_programs when the grid counts tiles of a block the entry hard-codes: each program
    moves one small tile, so raising the block is the fix and the program count follows from it. An autotuned
    block is the tuner's choice, not a constant to raise."""
    module = _module(path)
    definition = module.kernels.get(kernel) if module else None
    if definition is None or definition.autotuned:
        return []
    fixed = [(name, value, line) for name, value, line in grid_tiles(definition) or [] if isinstance(value, int)]
    if not fixed:
        return []
    what = ", ".join(dict.fromkeys(f"{name}={value}" for name, value, _ in fixed))
    return [Finding(
        "small_block", "L1",
        f"{kernel}: the grid counts tiles of a hard-coded {what}, and each program moves only one such tile: "
        f"raising it gives each program more bytes and the grid fewer programs",
        many.confidence,
        [Evidence("L1", "launch", f"{kernel} launched with {what}; {many.evidence[0].summary}",
                  {"kernel": kernel, "params": [n for n, _, _ in fixed], "explains": ["too_many_programs"]},
                  many.evidence[0].location)],
        sorted({line for _, _, line in fixed}),
        [f"raise {fixed[0][0]} until each program moves several KB (a power of two, with num_warps to match)"])]


def serial_findings(tiny_grid: Finding, kernels: set[str], path: str) -> list[Finding]:
    """serial_reduction beside a tiny grid whose kernel walks a runtime-length axis whole in every program, carrying
    an accumulator: the grid spans only the other axes, so the reduction (or scan) is what keeps it small, and
    splitting it across programs (partials and a second pass) is the fix. It ranks just under the tiny grid it
    names the mechanism of when a smaller tile would add programs (the grid counts tiles: a blocked loop is an
    ordinary reduction, costly only because the tiles are large); above it when the grid is one program per item
    (entity_grid: a norm over one vector, a loss per sample), where no tile size adds a program and the serial walk
    is what a fix must change."""
    module = _module(path)
    if module is None:
        return []
    out = []
    for name in sorted(kernels & set(module.kernels)):
        loops = serial_loops(KernelScan(module, module.kernels[name]))
        if not loops:
            continue
        loop, carried = loops[0]
        call = loop.iter
        axis = ast.unparse(call.args[1] if len(call.args) > 1 else call.args[0])
        share = SERIAL_LEADS if entity_grid(path, name) else SERIAL_SHARE
        out.append(Finding(
            "serial_reduction", "L1",
            f"{name}: every program walks the whole {axis} axis (line {loop.lineno}) into {', '.join(carried)}, so "
            f"the grid spans only the other axes: {tiny_grid.message.split(': ', 1)[1].split(' (')[0]}",
            round(min(1.0, tiny_grid.confidence * share), 2),
            [Evidence("L1", "source", f"loop over {ast.unparse(loop.target)} in range({', '.join(ast.unparse(a) for a in call.args)})"
                      f" carries {', '.join(carried)} across iterations; its range does not depend on program_id",
                      {"kernel": name, "axis": axis, "carried": carried}, f"{path}:{loop.lineno}"),
             *tiny_grid.evidence[:2]],
            [loop.lineno], [f"split the {axis} axis across programs: each reduces a slab into partials, a second "
                            "pass (or atomics) combines them; a scan carries each slab's total"]))
    return out


def unfused_findings(facts: LaunchFacts, path: str) -> list[Finding]:
    """unfused_ops from the launches themselves: cases whose kernels re-read inputs or round-trip intermediates
    through memory for a large share of their bytes (and for longer than a launch takes: a megabyte of partials
    between two passes costs less than either launch), whose entry moves a large share of the bytes in torch ops
    around the kernels (a clone, a cast, an epilogue), and cases of so many launches that their fixed cost
    outweighs the time their bytes take (one launch per tensor of a list).

    What it explains: every finding about a kernel that only writes an intermediate, or that is launched over and
    over (fusing removes it or its launches); the grid-shape findings of kernels that re-read an input or read an
    intermediate back (fused, they have no grid of their own)."""
    launched = {l.kernel for l in facts.launches}
    evidence, kernels, shares, cases = [], set(), [], set()
    for case in sorted({l.case for l in facts.launches}):
        launches, found = [l for l in facts.launches if l.case == case], len(evidence)
        moved, needed, what, rereaders, writers, readers = _traffic(facts, case)
        extra = (moved - needed) / moved if moved else 0.0
        if what and extra >= EXTRA_TRAFFIC and (moved - needed) / HBM_BYTES_PER_SECOND >= LAUNCH_SECONDS:
            shares.append(min(1.0, 2 * extra))
            kernels |= rereaders | writers
            claim = {"explains": ALL_BUT_FUSION, "others": sorted(launched - writers)} if writers else {
                "explains": GRID_SHAPE, "others": sorted(launched - rereaders)}
            evidence.append(Evidence("L1", "launch", f"{_case_label(facts, case)}: {'; '.join(what[:3])}: "
                                     f"{moved / 1e6:.0f} MB moved for {needed / 1e6:.0f} MB of inputs and outputs",
                                     {"case": case, "moved": moved, "needed": needed, **claim},
                                     launches[0].site or path))
            if writers and readers:
                evidence.append(Evidence("L1", "launch", f"{_case_label(facts, case)}: {', '.join(sorted(readers))} "
                                         "only reads the intermediate back: fused, it has no grid of its own",
                                         {"case": case, "explains": GRID_SHAPE, "others": sorted(launched - readers)},
                                         launches[0].site or path))
        outside = sum(facts.torch_ops.get(case, {}).values())
        if outside and outside >= EXTRA_TRAFFIC * (moved + outside):
            shares.append(min(1.0, 2 * outside / (moved + outside)))
            kernels |= {l.kernel for l in launches}
            ops = sorted(facts.torch_ops[case].items(), key=lambda kv: -kv[1])
            evidence.append(Evidence("L1", "launch", f"{_case_label(facts, case)}: the entry's torch ops move "
                                     f"{outside / 1e6:.0f} MB outside the kernels ({', '.join(f'{op} {b / 1e6:.0f} MB' for op, b in ops[:3])}) "
                                     f"beside the kernels' {moved / 1e6:.0f} MB", {"case": case, "torch_ops": dict(ops)},
                                     launches[0].site or path))
        overhead = len(launches) * LAUNCH_SECONDS
        memory = sum(l.tensor_bytes for l in launches) / HBM_BYTES_PER_SECOND
        if len(launches) >= MANY_LAUNCHES and overhead >= memory:
            shares.append(min(1.0, overhead / memory / 2) if memory else 1.0)
            repeated = {l.kernel for l in launches}
            kernels |= repeated
            evidence.append(Evidence("L1", "launch", f"{_case_label(facts, case)}: {len(launches)} launches "
                                     f"(~{overhead * 1e6:.0f} us of fixed launch cost) for ~{memory * 1e6:.0f} us of "
                                     "memory traffic", {"case": case, "launches": len(launches),
                                                        "explains": ALL_BUT_FUSION, "others": sorted(launched - repeated)},
                                     launches[0].site or path))
        cases |= {case} if len(evidence) > found else set()
    if not evidence:
        return []
    confidence = UNFUSED_CONFIDENCE * max(shares) * breadth(facts, cases)
    return [Finding(
        "unfused_ops", "L1", f"{', '.join(sorted(kernels))}: the entry's launches move far more than one kernel "
        f"would: {evidence[0].summary.split(': ', 1)[1]}", round(confidence, 2), evidence,
        _lines(l for l in facts.launches if l.kernel in kernels),
        ["one kernel (or fewer launches) must do the work: keep data on chip across the passes (online/one-pass "
         "algorithms, epilogue fusion), index shared data instead of copying it, batch many small tensors into "
         "one launch"])]


def _tile_values(scan: Any, values: dict[str, Any]) -> int | None:
    """Values of the kernel's largest tile at these constexpr values: an accumulator's tl.zeros/tl.full shape, or
    the tl.arange sizes a tile spans (the two largest for a 2-D kernel; for a dot, M x N, not K)."""

    def size(node: ast.AST) -> Any:
        return values.get(node.id, const_value(node, scan.m.constants)) if isinstance(node, ast.Name) else const_value(node, {})

    shapes = []
    for call in scan.tl_calls("zeros", "full"):
        dims = call.args[0].elts if call.args and isinstance(call.args[0], (ast.Tuple, ast.List)) else []
        sizes = [size(d) for d in dims]
        if sizes and all(isinstance(v, int) for v in sizes):
            shapes.append(math.prod(sizes))
    aranges = {}
    for call in scan.tl_calls("arange"):
        if len(call.args) == 2 and isinstance(size(call.args[0]), int) and isinstance(size(call.args[1]), int):
            name = call.args[1].id if isinstance(call.args[1], ast.Name) else call.lineno
            if not ("dot" in scan.ops and isinstance(name, str) and name.upper().endswith("K")):
                aranges[name] = size(call.args[1]) - size(call.args[0])
    spans = sorted(aranges.values(), reverse=True)
    if spans:
        shapes.append(spans[0] * spans[1] if (scan.is_2d or "dot" in scan.ops) and len(spans) > 1 else spans[0])
    return max(shapes, default=None)


def spill_findings(facts: LaunchFacts, path: str) -> list[Finding]:
    """register_spill before compiling: cases whose largest tile gives each of the launch's threads more values
    than the 255 registers a thread has (a 256 x 256 fp32 accumulator on 4 warps: 512 each). Compiling confirms it
    (ptxas spill stores at L3)."""
    module = _module(path)
    if module is None:
        return []
    found: dict[str, list[tuple[CaseLaunch, int, int]]] = {}
    scans = {name: KernelScan(module, kernel) for name, kernel in module.kernels.items()}
    tiles: dict[tuple, int | None] = {}  # (kernel, constexpr values) -> tile values: hundreds of launches share a few
    for l in facts.launches:
        if l.kernel not in scans or l.launch is None:
            continue
        names = list(l.launch.signature)
        values = {names[p[0]]: v for p, v in l.launch.constexprs.items() if len(p) == 1 and isinstance(v, int)}
        key = (l.kernel, tuple(sorted(values.items())))
        if key not in tiles:
            tiles[key] = _tile_values(scans[l.kernel], values)
        tile = tiles[key]
        threads = 32 * int(l.launch.options.get("num_warps", 4))
        if tile and tile / threads > REGISTERS_PER_THREAD:
            found.setdefault(l.kernel, []).append((l, tile, threads))
    out = []
    for kernel, hits in found.items():
        cases = sorted({l.case for l, _, _ in hits})
        worst = max(hits, key=lambda h: h[1] / h[2])
        out.append(Finding(
            "register_spill", "L1",
            f"{kernel}: {len(cases)} of {facts.n_cases} cases hold a {worst[1]}-value tile on {worst[2]} threads: "
            f"{worst[1] // worst[2]} values per thread, past the {REGISTERS_PER_THREAD} registers a thread has",
            round(SPILL_CONFIDENCE * breadth(facts, cases), 2),
            [Evidence("L1", "launch", f"{_case_label(facts, l.case)}: {tile}-value tile / {threads} threads = "
                      f"{tile // threads} per thread", {"case": l.case, "tile": tile, "threads": threads}, l.site or path)
             for l, tile, threads in hits],
            _lines(l for l, _, _ in hits),
            ["each thread must hold well under 255 tile values: more warps (num_warps up to 8 or 16), or a smaller tile"]))
    return out


def pipelining_findings(facts: LaunchFacts, path: str) -> list[Finding]:
    """no_software_pipelining before compiling: a kernel whose loop feeds tl.dot, launched with num_stages=1, so
    the pipeliner keeps one buffer and every iteration waits for its own tiles to arrive."""
    module = _module(path)
    if module is None:
        return []
    dot_loops = {name: any(isinstance(c, ast.Call) and tl_name(c, module.aliases) == "dot"
                           for loop in loops_of(kernel.node) for st in loop.body for c in ast.walk(st))
                 for name, kernel in module.kernels.items()}
    hits: dict[str, list[CaseLaunch]] = {}
    for l in facts.launches:
        if dot_loops.get(l.kernel) and l.launch is not None and l.launch.options.get("num_stages", 2) <= 1:
            hits.setdefault(l.kernel, []).append(l)
    return [Finding(
        "no_software_pipelining", "L1",
        f"{kernel}: launched with num_stages=1 on {len({l.case for l in ls})} of {facts.n_cases} cases: its K loop's tiles "
        "are single-buffered, so each iteration waits on memory",
        round(UNPIPELINED_CONFIDENCE * breadth(facts, (l.case for l in ls)), 2),
        [Evidence("L1", "launch", f"{_case_label(facts, l.case)}: {l.kernel} num_stages=1", {"case": l.case},
                  l.site or path) for l in ls],
        _lines(ls), ["num_stages >= 2 (3-4 on Hopper) with the stages' shared memory inside the SM's budget"])
        for kernel, ls in hits.items()]

