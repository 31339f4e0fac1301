"""What kind of change an LLM candidate made to its parent kernel, read from the two sources.

Synthesis keys an LLM win by its kind of change, so wins of the same idea on different operators (and in
either grounding arm) land in one group. The diff decides which kinds happened (features counted on both
sides with the Python AST: kernels, grid axes, atomics, unmasked accesses, ...); the round's Change line only
orders them, naming the kind the model itself led with; a fixed order breaks the tie when it names none.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

from kopt.patterns import FAMILIES
from kopt.signals import SIGNALS
from kopt.vocabulary import FINDING_IDS


@dataclass(frozen=True)
class ChangeKind:
    """One kind of change: what it is, its catalog family, the curated patterns that already prescribe it,
    what must hold before trying it, and the words a Change line uses for it."""

    what: str
    family: str
    curated: tuple[str, ...]
    precondition: str
    words: str


# Most structural first: the order breaks ties between kinds the Change line does not name.
CHANGE_KINDS: dict[str, ChangeKind] = {
    "split_reduction": ChangeKind(
        "split the reduction over many more programs (a 2-D grid of partial results, then a small second pass) "
        "so every SM streams memory", "reduction", ("two_stage_reduction", "scale_grid_with_problem"),
        "the launch gives fewer programs than about two waves of SMs because the reduced axis is walked by one "
        "program; the partials fit in a small fp32 workspace",
        r"split(s|ting)?\b|partials?\b|two-pass|second (pass|kernel)|across (many )?programs"),
    "persistent_grid": ChangeKind(
        "a persistent grid: about one program per SM striding over the work", "persistent", ("persistent_grid",),
        "the work splits into many independent blocks; a per-program setup or accumulator is worth reusing",
        r"persistent|grid-stride|num_sms|per sm\b"),
    "atomics_privatized": ChangeKind(
        "global atomics replaced or privatized (per-program histograms, replicated scratch copies, a sort or "
        "bucket list instead of atomics)", "atomics", ("privatized_atomics", "per_program_partials", "two_stage_reduction"),
        "many programs update the same addresses with atomics; the privatized copies fit in registers, shared "
        "memory or a small scratch buffer", r"atomic|privati[sz]|histogram|scratch cop|bucket|csr\b"),
    "dot_reformulation": ChangeKind(
        "the arithmetic recast as tensor-core dots (e.g. a convolution as a banded matrix product)", "tensor_cores",
        ("half_precision_operands",), "the per-output arithmetic can be written as a small matrix product with "
        "dimensions of at least 16", r"tensor[- ]cores?|toeplitz|banded|matrix multipl"),
    "operand_padding": ChangeKind(
        "operands first copied into zero-padded buffers whose row stride is a multiple of 16 bytes",
        "memory_access", ("sixteen_byte_alignment",), "a row stride or the reduced dimension is not a multiple of "
        "16 bytes and the operand is reused enough (e.g. K >= 128) to pay for one extra copy",
        r"pad(ded|ding)?\b"),
    "operand_relayout": ChangeKind(
        "an operand copied once into the layout the dot wants (K-major) instead of being read across its stride",
        "layout", ("pretransposed_operand", "contiguous_inner_axis"), "the dot reads an operand along its "
        "strided axis; one transposing copy is cheap next to the dot", r"k-major|transpos|layout"),
    "unmasked_fast_path": ChangeKind(
        "full blocks take an unmasked path; only the last partial block is masked", "memory_access",
        ("uniform_masks",), "the size is not a multiple of the vector width, so a bound mask splits every "
        "access; most blocks are full", r"unmasked|full blocks?|fast path|tail"),
    "aligned_windows": ChangeKind(
        "rows read through 16-byte-aligned windows (start rounded down to a whole vector, the row's own elements "
        "selected in registers), so odd row lengths still get vector loads", "memory_access", (),
        "rows or pointers are not 16-byte aligned (odd row lengths or strides), so loads fall back to scalar; "
        "reading up to a vector before and after each row stays inside the allocation",
        r"16-byte|vectori[sz]|vector|align|128-bit"),
    "vector_hints": ChangeKind(
        "alignment and contiguity hints (tl.multiple_of, tl.max_contiguous) so accesses vectorize", "memory_access",
        ("alignment_hints", "specialize_unit_stride"), "the hinted divisibility really holds for every case",
        r"multiple_of|max_contiguous|hint|16-byte|vectori[sz]|align"),
    "grid_flattened": ChangeKind(
        "a multi-dimensional grid flattened into one 1-D grid over the contiguous elements", "launch_config",
        ("coarsen_tiny_programs",), "the data is contiguous but a 2-D/3-D grid wastes lanes on short rows or "
        "pays per-row setup", r"flat|1-?d (grid|launch|kernel)"),
    "grid_axes_added": ChangeKind(
        "a flat grid replaced by a multi-dimensional one, so per-element // and % index math goes away", "indexing",
        ("remove_modulo_indexing",), "the flat index is decomposed with runtime // and % on every element",
        r"[23]-?d grid|multi-?dim"),
    "autotune_added": ChangeKind(
        "@triton.autotune over tile shapes, warps and stages", "launch_config", ("autotune_configs",),
        "the best configuration differs across the cases' shapes", r"autotun"),
    "grouped_order": ChangeKind(
        "grouped (swizzled) program order so neighbouring programs share tiles in L2", "cache",
        ("grouped_program_order",), "a 2-D tiled kernel re-reads operand tiles across programs", r"group(ed)?\b|swizzl"),
    "pipelining": ChangeKind(
        "a deeper software pipeline (num_stages) on the main loop", "pipelining",
        ("num_stages_search", "pipelineable_loop_shape"), "the loop streams tiles that fit several times in shared "
        "memory", r"stages?\b|pipelin"),
    "fused": ChangeKind(
        "fewer kernels or launches: passes fused", "fusion", ("fuse_elementwise_chain", "fuse_epilogue"),
        "an intermediate goes through global memory between two kernels or passes", r"fus|merg|one kernel|single"),
    "retiled": ChangeKind(
        "tile shape and work per program resized to the problem (block sizes, rows per program, warps)", "tiling",
        ("larger_dot_tiles", "raise_small_block", "coarsen_tiny_programs", "scale_num_warps_with_tile"),
        "a program moves too few bytes, or its tile wastes lanes on the cases' shapes",
        r"tile|retil|block|rows per program|warps"),
    "precision": ChangeKind(
        "dot operand precision changed (tf32, bf16/fp16 operands)", "tensor_cores",
        ("tf32_dot", "tf32x3_dot", "half_precision_operands"), "the tolerance allows the lower precision",
        r"tf32|precision|bf16|fp16 operands|fp8"),
    "rewritten": ChangeKind("other source changes", "memory_access", (), "", r"$^"),
}
# The findings and L1 signals each kind of change can remove: a synthesized pattern's symptoms are the ones of
# these its winning parents showed, not whatever else they happened to show (int64 indexing on two histograms).
ANSWERS: dict[str, tuple[str, ...]] = {
    "split_reduction": ("low_occupancy", "tail_effect", "serial_reduction", "latency_bound", "constant_grid"),
    "persistent_grid": ("tail_effect", "too_many_programs", "low_occupancy", "tiny_programs"),
    "atomics_privatized": ("atomic_contention", "serial_reduction", "atomic_in_loop", "scattered_atomic",
                           "shared_atomic", "spin_lock"),
    "dot_reformulation": ("no_tensor_cores", "scalar_loop", "redundant_loads", "compute_bound"),
    "operand_padding": ("misaligned_access", "non_vectorized_load", "masked_access", "no_software_pipelining"),
    "operand_relayout": ("transpose_before_dot", "layout_conversion", "uncoalesced_access", "no_tensor_cores",
                         "strided_access"),
    "unmasked_fast_path": ("masked_access", "non_vectorized_load", "misaligned_access"),
    "aligned_windows": ("misaligned_access", "non_vectorized_load", "masked_access"),
    "vector_hints": ("misaligned_access", "non_vectorized_load", "modulo_indexing", "modulo_offsets",
                     "uncoalesced_access", "strided_access"),
    "grid_flattened": ("too_many_programs", "small_block", "masked_access", "non_vectorized_load", "tiny_programs"),
    "grid_axes_added": ("modulo_indexing", "modulo_offsets"),
    "autotune_added": ("untuned_config", "no_autotune", "default_num_warps"),
    "grouped_order": ("poor_l2_reuse", "no_grouped_order"),
    "pipelining": ("no_software_pipelining", "latency_bound"),
    "fused": ("unfused_ops", "memory_bound"),
    "retiled": ("small_block", "untuned_config", "low_occupancy", "register_spill", "too_many_programs",
                "tiny_programs", "default_num_warps"),
    "precision": ("fp32_dot_ieee", "no_tensor_cores"),
}
GENERIC = {"retiled"}
OPENING = 300  # the part of a Change line that says what changed; the rest argues why, naming other kinds in passing  # shows up beside almost every rewrite: the main kind only when nothing else is named
assert all(k.family in FAMILIES for k in CHANGE_KINDS.values())
assert set(ANSWERS) == set(CHANGE_KINDS) - {"rewritten"}
assert all(a in FINDING_IDS or a in SIGNALS for answers in ANSWERS.values() for a in answers)

_WORKSPACE = re.compile(r"partial|workspace|^ws$|split|scratch", re.I)
_PRIVATE = re.compile(r"replica|copies|privat|scratch|bucket|perm|rank", re.I)
_PAD = re.compile(r"pad|^[A-Z]p$", re.I)
_GROUP = re.compile(r"^GROUP(_|$)|group_m|group_size", re.I)
_SMS = re.compile(r"num_sms|multi_processor_count|NUM_SMS", re.I)
_DOWNCAST = {"float16", "bfloat16", "float8e4nv", "float8e5", "float8e4b15"}


def _dotted(node: ast.AST) -> str:
    """`tl.atomic_add` for an attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any("jit" in _dotted(d.func if isinstance(d, ast.Call) else d) for d in fn.decorator_list)


def features(source: str) -> Counter:
    """Counts of what a kind of change adds or removes; empty when the source does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Counter()
    f: Counter = Counter()
    kernels = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and _is_kernel(n)]
    f["kernels"] = len(kernels)
    f["autotune"] = sum("autotune" in _dotted(d.func if isinstance(d, ast.Call) else d)
                        for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for d in n.decorator_list)
    for k in kernels:
        axes = {c.args[0].value for c in ast.walk(k) if isinstance(c, ast.Call) and _dotted(c.func).endswith("program_id")
                and c.args and isinstance(c.args[0], ast.Constant)}
        f["grid_axes"] = max(f["grid_axes"], len(axes))
    kernel_nodes = {id(n) for k in kernels for n in ast.walk(k)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func).split(".")[-1]
            keywords = {kw.arg: kw.value for kw in node.keywords}
            in_kernel = id(node) in kernel_nodes
            if in_kernel and name in ("load", "store"):
                f["masked" if "mask" in keywords or len(node.args) > 2 else "unmasked"] += 1
            elif in_kernel and name.startswith("atomic_"):
                f["atomics"] += 1
                if node.args:
                    f[f"atomic_at:{ast.unparse(node.args[0])}"] = 1
            elif in_kernel and name in ("histogram", "dot", "trans", "permute", "num_programs", "multiple_of",
                                        "max_contiguous", "sum", "max", "min", "reduce", "cumsum"):
                f["reduce" if name in ("sum", "max", "min", "reduce") else name] += 1
            elif in_kernel and name == "to" and node.args and _dotted(node.args[0]).split(".")[-1] in _DOWNCAST:
                f["downcast"] += 1
            if "num_stages" in keywords:
                f["stages"] = max(f["stages"], _int(keywords["num_stages"]))
            if "num_warps" in keywords:
                f[f"warps={ast.unparse(keywords['num_warps'])}"] += 1
            for key in ("input_precision", "allow_tf32"):
                if key in keywords:
                    f[f"{key}={ast.unparse(keywords[key])}"] += 1
            if keywords.keys() & {"num_warps", "num_stages"} or any(k and "BLOCK" in k for k in keywords):
                f["launch_args:" + ",".join(f"{k}={ast.unparse(v)}" for k, v in sorted(keywords.items(), key=str)
                                            if k and ("BLOCK" in k or k.startswith("num_")))] += 1
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and id(node) in kernel_nodes
              and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.FloorDiv)
              and ast.dump(node.left.right) == ast.dump(node.right)):
            f["round_down"] += 1  # (x // V) * V: an access window that starts on a whole vector
        elif isinstance(node, ast.Attribute) and node.attr == "T" and id(node) in kernel_nodes:
            f["trans"] += 1
        elif isinstance(node, (ast.Name, ast.arg)):
            name = node.id if isinstance(node, ast.Name) else node.arg
            for label, rx in (("workspace", _WORKSPACE), ("private", _PRIVATE), ("pad", _PAD), ("group", _GROUP),
                              ("sms", _SMS)):
                if rx.search(name):
                    f[f"{label}:{name}"] = 1
            if "VEC" in name.upper().split("_") or name.upper().startswith("VEC"):
                f[f"vec:{name}"] = 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if re.fullmatch(r"[A-Z_]*(BLOCK|TILE|ROWS|CHUNK)[A-Z_0-9]*", node.targets[0].id):
                f[f"block:{node.targets[0].id}={ast.unparse(node.value)}"] += 1
    return f


def _int(node: ast.AST) -> int:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else 1


def _names(f: Counter, label: str) -> set[str]:
    return {k for k in f if k.startswith(label + ":")}


def detected(old: str, new: str) -> list[str]:
    """Every kind of change the diff shows, in CHANGE_KINDS order."""
    a, b = features(old), features(new)
    more = lambda key: b[key] > a[key]
    added = lambda label: bool(_names(b, label) - _names(a, label))
    found = {
        "split_reduction": (b["reduce"] or b["dot"]) > 0 and (more("kernels") or more("grid_axes")) and added("workspace"),
        "persistent_grid": more("num_programs") or added("sms"),
        "atomics_privatized": a["atomics"] > 0 and (b["atomics"] < a["atomics"] or more("histogram")
                                                    or added("private") or added("atomic_at") and more("kernels")),
        "dot_reformulation": a["dot"] == 0 and b["dot"] > 0,
        "operand_padding": added("pad") and more("kernels"),
        "operand_relayout": b["dot"] > 0 and more("kernels") and more("trans"),
        "unmasked_fast_path": more("unmasked") and b["masked"] > 0,
        "aligned_windows": added("vec") or more("round_down"),
        "vector_hints": more("multiple_of") or more("max_contiguous"),
        "grid_flattened": 0 < b["grid_axes"] < a["grid_axes"],
        "grid_axes_added": b["grid_axes"] > a["grid_axes"] > 0,
        "autotune_added": more("autotune"),
        "grouped_order": added("group") and b["dot"] > 0,
        "pipelining": b["stages"] > max(a["stages"], 1),
        "fused": b["kernels"] < a["kernels"],
        "retiled": _names(a, "block") != _names(b, "block") or _names(a, "launch_args") != _names(b, "launch_args")
        or {k for k in a if k.startswith("warps=")} != {k for k in b if k.startswith("warps=")},
        "precision": more("downcast") or {k for k in a if k.startswith(("input_precision", "allow_tf32"))}
        != {k for k in b if k.startswith(("input_precision", "allow_tf32"))},
    }
    return [kind for kind in CHANGE_KINDS if found.get(kind)]


def classify_change(old: str, new: str, change_line: str = "") -> list[str]:
    """Kinds of change from `old` to `new` (CHANGE_KINDS keys), the main one first: of the kinds the diff shows,
    the one the Change line's opening names earliest (a generic retile only when it names nothing more specific),
    else the most structural. ['rewritten'] when none is recognised."""
    kinds = detected(old, new)
    if not kinds:
        return ["rewritten"]
    text = change_line[:OPENING].lower()

    def rank(kind: str) -> tuple[bool, bool, int, int]:
        match = re.search(CHANGE_KINDS[kind].words, text)
        return (match is None, kind in GENERIC, match.start() if match else 0, list(CHANGE_KINDS).index(kind))

    return sorted(kinds, key=rank)
