"""Per-case launch facts: for every CASE, the kernels `entry` launches, their grid, the arguments Triton
specializes as divisible by 16 and which data each tensor argument is, captured without running a kernel.

The task's `make_inputs` and `entry` run under torch's FakeTensorMode (shapes, strides and dtypes, no storage)
while Triton's launch is intercepted (kopt.harness.compile.intercept_launches, Triton's own binder); only inputs
whose making reads a generated value are made for real on the CPU, as compiling a case does. Diagnosis
compiles one case; these facts say what the other cases do: a grid of a few dozen programs on a 132-SM GPU, or
an odd row length that drops the 16-divisibility of a stride or mask bound so every access of that case goes
scalar while the aligned cases run near the roofline.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from kopt.diagnose.occupancy import LOW_OCCUPANCY_WARPS
from kopt.vocabulary import Evidence, Finding

# SMs of the datacenter part of each compute capability (H100/H200 SXM: 132).
SM_COUNT = {80: 108, 86: 84, 89: 128, 90: 132, 100: 148, 103: 148}
DEFAULT_SMS = 132
TINY_GRID_CONFIDENCE = 0.85  # a grid below the SM count leaves SMs idle whatever the kernel does
THIN_GRID_CONFIDENCE = 0.8  # a grid of about one small program per SM: every SM works, but with few warps
MISALIGNED_CONFIDENCE = 0.8
DEEPER_WIDTH_CAUSES = ("uncoalesced_access", "modulo_indexing")  # narrow whatever the alignment: a gather, a stride, a %
STRIDE_CONFIRMED = 0.7  # a runtime stride on the lanes' axis that no case passes as 1
REREAD_CONFIRMED = 0.75  # a tile streamed again by the programs of a grid axis every case launches wider than 1
SHORT_CHAIN = 1024  # a serial loop's axis no longer than this in every case fits one tile: a block op, not a split
SHORT_CHAIN_CONFIDENCE = 0.85
ROWS_PER_TRIP_SHARE = 0.5  # the tile-of-rows reading of a long chain, beside the split it ranks under
SHORT_PIPELINE = 4  # a nested dot loop of at most this many trips in every case never fills its pipeline
SHORT_PIPELINE_CONFIDENCE = 0.8
TINY_PROGRAM_BYTES = 1024  # at most this many bytes per program (all tensor bytes / programs): launch-bound
MANY_PROGRAMS = 8  # ... when the grid has at least this many programs per SM
TINY_PROGRAMS_CONFIDENCE = 0.65
TAIL_MAX_WAVES = 3  # a ragged last wave costs little once there are many waves
TAIL_MIN_IDLE = 0.25  # the share of the last wave's slots left idle before it is worth a finding
TAIL_CONFIDENCE = 0.45  # a ragged last wave is rarely what to fix first
CASE_LAUNCHES = 4  # launches named per case in case_lines
FAKE_GPU = "cuda:0"  # the device fake inputs are made on (a bare "cuda" asks the driver for its current device)
REAL_INPUT_BYTES = 4 << 30  # the most a case's inputs may take when made for real (make_inputs reads a generated value)


@dataclass
class CaseLaunch:
    """One kernel launch of one case: the grid and Triton's specialization of its arguments."""

    case: int
    kernel: str
    grid: tuple[int, ...]
    divisible: set[str]  # arguments Triton marked tt.divisibility=16 (pointers and ints)
    ints: dict[str, int]  # runtime int arguments and their values
    pointers: set[str]  # tensor arguments
    address_args: set[str]  # arguments the kernel's load/store addresses or masks use
    mask_only: set[str] = field(default_factory=set)  # of those, the ones only masks use
    tensor_bytes: int = 0  # bytes of all tensor arguments: an upper bound on what the launch moves
    tensors: dict[str, tuple] = field(default_factory=dict)  # tensor argument -> (view key, bytes): which data it is
    reads: set[str] = field(default_factory=set)  # arguments the kernel loads through
    writes: set[str] = field(default_factory=set)  # arguments the kernel stores or atomically updates through
    site: str | None = None  # task file:line of the launch
    launch: Any = field(default=None, repr=False)  # the intercepted Launch, to compile this signature

    @property
    def programs(self) -> int:
        return math.prod(self.grid) if self.grid else 1

    @property
    def num_warps(self) -> int:
        return int((getattr(self.launch, "options", None) or {}).get("num_warps", 4))

    def warps_per_sm(self, sms: int) -> float:
        """The warps the grid puts on each SM at most, whatever the kernel's resources allow."""
        return self.programs * self.num_warps / sms

    def misaligned(self) -> list[str]:
        """Address/mask arguments this case leaves without 16-divisibility (an int equal to 1 is a constant)."""
        ints = [a for a, v in self.ints.items() if a in self.address_args and v != 1 and a not in self.divisible]
        ptrs = [a for a in self.pointers if a in self.address_args and a not in self.divisible]
        return sorted(ptrs) + sorted(ints)


@dataclass
class LaunchFacts:
    launches: list[CaseLaunch] = field(default_factory=list)
    cases: list[dict] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)  # case -> why no launch was captured
    sms: int = DEFAULT_SMS
    inputs: dict[int, dict] = field(default_factory=dict)  # case -> storage -> bytes of the entry's inputs
    outputs: dict[int, dict] = field(default_factory=dict)  # case -> storage -> bytes of what the entry returned
    torch_ops: dict[int, dict[str, int]] = field(default_factory=dict)  # case -> torch op -> bytes it moved in entry

    @property
    def n_cases(self) -> int:
        """Cases with a captured launch (at least 1, to divide by)."""
        return max(1, len({l.case for l in self.launches}))


def breadth(facts: LaunchFacts, cases: Iterable[int]) -> float:
    """0.6 to 1: a launch-level cause weighs more the more of the captured cases it holds on."""
    return 0.6 + 0.4 * (len(set(cases)) / facts.n_cases)


def kernel_shares(facts: LaunchFacts) -> dict[str, float]:
    """Each kernel's share of the task's memory time, estimated per launch as its tensor bytes over the fraction of
    the SMs its grid fills: a finalize or reduce kernel over a small workspace beside the main pass is a few
    percent, while a one-program scan is not (it streams its few bytes through one SM)."""
    cost: dict[str, float] = {}
    for l in facts.launches:
        cost[l.kernel] = cost.get(l.kernel, 0.0) + l.tensor_bytes / min(1.0, max(1, l.programs) / facts.sms)
    total = sum(cost.values())
    return {k: c / total for k, c in cost.items()} if total else {}


def case_lines(facts: LaunchFacts, roofline: dict[int, float] | None = None) -> list[str]:
    """Per case, what its launches look like: grid, programs per SM and the address/mask arguments Triton cannot
    prove 16-divisible (those accesses go narrow), beside the case's measured roofline fraction when known; then
    each kernel's share of the bytes when there are several."""
    lines = []
    for index in range(len(facts.cases)):
        launches = [l for l in facts.launches if l.case == index]
        if not launches:
            why = facts.skipped.get(index)
            lines.append(f"- {_case_label(facts, index)}: not captured{f' ({why})' if why else ''}")
            continue
        roof = f"{roofline[index]:.0%} of roofline; " if roofline and index in roofline else ""
        parts = []
        for l in launches[:CASE_LAUNCHES]:
            odd = l.misaligned()
            parts.append(f"{l.kernel} grid {l.programs} ({l.programs / facts.sms:.1f}/SM)"
                         + (f", not 16-divisible: {', '.join(odd)}" if odd else ""))
        more = f"; {len(launches) - CASE_LAUNCHES} more launches" if len(launches) > CASE_LAUNCHES else ""
        lines.append(f"- {_case_label(facts, index)}: {roof}{'; '.join(parts)}{more}")
    shares = kernel_shares(facts)
    if len(shares) > 1:
        lines.append("- each kernel's share of the memory time (tensor bytes over the share of SMs its grid fills): "
                     + ", ".join(
            f"{k} {v:.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])))
    return lines


def sm_count(target: str | None) -> int:
    digits = "".join(ch for ch in (target or "") if ch.isdigit())
    return SM_COUNT.get(int(digits), DEFAULT_SMS) if digits else DEFAULT_SMS


def address_args(fn: Any) -> tuple[set[str], set[str]]:
    """Parameters of a @triton.jit function that feed load/store/atomic addresses or masks, through assignments:
    (all of them, those only masks use)."""
    return _access_args(fn)[:2]


def indexing_names(node: ast.AST, per_element: set[str]) -> set[str]:
    """The names an index expression's alignment follows. The divisor of a per-element `//` or `%` (its dividend
    built from tl.arange) is not among them: `offs // (H * W)` does not put H and W in the address the way a stride
    does, the division itself is the cost (modulo_indexing). A scalar quotient (`K // split_k`) keeps both: it is
    the offset whose alignment is unknown."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
        left = indexing_names(node.left, per_element)
        if left & per_element or "arange" in {n.attr for n in ast.walk(node.left) if isinstance(n, ast.Attribute)}:
            return left
    if isinstance(node, ast.Name):
        return {node.id}
    return set().union(set(), *(indexing_names(c, per_element) for c in ast.iter_child_nodes(node)))


def _access_args(fn: Any) -> tuple[set[str], set[str], set[str], set[str]]:
    """(address or mask parameters, mask-only parameters, parameters loaded through, parameters stored through)."""
    from kopt.diagnose.l1_source import assignments_in
    from kopt.diagnose.l1_source import names_in as all_names

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set(), set(), set(), set()
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None)
    if func is None:
        return set(), set(), set(), set()
    assigned = assignments_in(func.body)
    per_element: set[str] = set()  # names built from tl.arange: their divisions are per element
    for _ in range(len(assigned)):
        grown = per_element | {n for n, v in assigned if all_names(v) & per_element
                               or any(isinstance(a, ast.Attribute) and a.attr == "arange" for a in ast.walk(v))}
        if grown == per_element:
            break
        per_element = grown

    def names_in(value: ast.AST) -> set[str]:
        return indexing_names(value, per_element)

    addresses: set[str] = set()
    masks: set[str] = set()
    loaded: set[str] = set()
    stored: set[str] = set()
    for call in ast.walk(func):
        name = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else ""
        if name in ("load", "store") or name.startswith("atomic_"):
            if call.args:
                addresses |= names_in(call.args[0])
                (loaded if name == "load" else stored).update(names_in(call.args[0]))
            masks |= set().union(set(), *(names_in(k.value) for k in call.keywords if k.arg == "mask"))
    params = {a.arg for a in func.args.args}

    loaded_values = {n for n, v in assigned if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                                                   and c.func.attr == "load" for c in ast.walk(v))}

    def reach(roots: set[str], through_loads: bool = True) -> set[str]:
        """The parameters `roots` are computed from; without `through_loads`, not past a loaded value (a bin index
        loaded from x makes x no pointer the atomic writes through)."""
        names, frontier = set(), roots
        while frontier - names:
            names |= frontier
            frontier = set().union(set(), *(names_in(v) for n, v in assigned
                                            if n in names and (through_loads or n not in loaded_values)))
        return names & params

    in_address, in_mask = reach(addresses), reach(masks)
    return in_address | in_mask, in_mask - in_address, reach(loaded, False), reach(stored, False)


def capture(task: Any, target: str | None = None) -> LaunchFacts:
    """The launches of every case of `task`, captured on fake tensors (no storage, no kernel run)."""
    from kopt.harness.compile import gpu_target

    spec = gpu_target(target or "sm_90")
    facts = LaunchFacts(cases=list(task.cases), sms=sm_count(f"{spec.arch}"))
    if task.entry is None:
        return facts
    addresses: dict[Any, tuple] = {}
    for index, case in enumerate(task.cases):
        runs = []
        for device in (FAKE_GPU, "cpu"):  # on CPU fake tensors when the entry needs a real GPU for some torch op
            runs.append(_run_case(task, case, spec, facts.sms, device))
            if runs[-1][4] is None:
                break
        # a run that finished, else the one that got furthest (most launches)
        inputs, outputs, launches, torch_ops, problem = min(runs, key=lambda r: (r[4] is not None, -len(r[2])))
        if inputs is None or (problem and not launches):
            facts.skipped[index] = problem
            continue
        facts.inputs[index] = inputs
        if outputs is not None:
            facts.outputs[index] = outputs
        facts.torch_ops[index] = torch_ops
        for launch in launches:
            names = list(launch.signature)
            divisible = {names[p[0]] for p, attrs in launch.attrs.items() if len(p) == 1
                         and any(k == "tt.divisibility" and v >= 16 for k, v in attrs)}
            kinds = {n: str(t) for n, t in launch.signature.items()}
            jit = launch.fn
            if jit not in addresses:
                addresses[jit] = _access_args(jit.fn)
            facts.launches.append(CaseLaunch(
                case=index, kernel=jit.fn.__name__, grid=tuple(int(g) for g in launch.grid), divisible=divisible,
                ints=_int_values(launch), pointers={n for n, t in kinds.items() if t.startswith("*")},
                address_args=addresses[jit][0], mask_only=addresses[jit][1],
                tensor_bytes=getattr(launch, "tensor_bytes", 0), tensors=getattr(launch, "tensors", {}),
                reads=addresses[jit][2], writes=addresses[jit][3], site=getattr(launch, "site", None), launch=launch))
    return facts


def _run_case(task: Any, case: dict, spec: Any, sms: int, device: str) -> tuple:
    """(input storages, output storages, launches, torch op bytes, what failed) of one case run on fake tensors made
    on `device`, with torch.cuda answering as the target GPU."""
    from kopt.harness.compile import fake_tensors, intercept_launches

    try:
        with _emulated_gpu(sms, spec.arch):
            inputs = _inputs(task, case, device)
    except Exception as exc:  # inputs that cannot be made even for real: the case is left out, said why
        return None, None, [], {}, f"make_inputs: {type(exc).__name__}: {str(exc)[:120]}"
    outputs, problem = None, None
    with fake_tensors(), _emulated_gpu(sms, spec.arch):
        stored = _storages(inputs)
        with intercept_launches(spec) as launches, _keeping_int_values(launches, str(task.path)), \
                _torch_traffic() as torch_ops:
            try:
                outputs = _storages(task.entry(*inputs))
            except Exception as exc:
                problem = f"entry: {type(exc).__name__}: {str(exc)[:120]}"
    return stored, outputs, launches, torch_ops, problem


def _inputs(task: Any, case: dict, device: str) -> tuple:
    """The case's inputs as fake tensors on `device`; made for real on the CPU (then faked) when make_inputs reads a
    value it generated (int(torch.randint(...))), which fake tensors cannot give, within REAL_INPUT_BYTES."""
    from torch._subclasses.fake_tensor import DataDependentOutputException

    from kopt.harness.compile import fake_tensors

    with fake_tensors():
        try:
            return task.make_inputs(case, device, 0)
        except DataDependentOutputException:
            pass
    with _allocating(REAL_INPUT_BYTES):
        return task.make_inputs(case, "cpu", 0)


@contextlib.contextmanager
def _emulated_gpu(sms: int, capability: int) -> Iterator[None]:
    """torch.cuda answering as the target GPU would, for fake CUDA tensors: an entry that sizes a persistent grid from
    the device's SM count, or takes a CPU fallback unless its inputs are on CUDA, launches what it launches there."""
    import types
    from unittest import mock

    import torch

    props = types.SimpleNamespace(name=f"kopt's emulated sm_{capability}", multi_processor_count=sms,
                                  major=capability // 10, minor=capability % 10, total_memory=141 << 30,
                                  max_threads_per_multi_processor=2048, warp_size=32, L2_cache_size=50 << 20)
    with mock.patch.multiple(torch.cuda, is_available=lambda: True, device_count=lambda: 1, current_device=lambda: 0,
                             get_device_properties=lambda *a, **k: props, synchronize=lambda *a, **k: None,
                             get_device_capability=lambda *a, **k: (props.major, props.minor)):
        yield


@contextlib.contextmanager
def _allocating(limit: int) -> Iterator[None]:
    """Within this block, torch may create at most `limit` bytes of tensors (counted as made, never freed): a
    factory call that would pass it raises MemoryError before allocating, so a case of hundreds of GB is left out
    with a reason instead of exhausting the machine."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    used = [0]

    def charge(nbytes: int) -> None:
        used[0] += nbytes
        if used[0] > limit:
            raise MemoryError(f"over the {limit >> 30} GB kopt makes inputs within when they cannot be faked")

    class Budget(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            leaves = tree_leaves((args, kwargs))
            size = next((a for a in args if isinstance(a, (list, tuple)) and all(isinstance(d, int) for d in a)), None)
            if size is not None and not any(isinstance(a, torch.Tensor) for a in leaves):  # a factory: charge first
                dtype = (kwargs or {}).get("dtype") or torch.get_default_dtype()
                charge(math.prod(size) * dtype.itemsize)
                return func(*args, **(kwargs or {}))
            out = func(*args, **(kwargs or {}))
            charge(sum(t.numel() * t.element_size() for t in tree_leaves(out) if isinstance(t, torch.Tensor)))
            return out

    with Budget():
        yield


# torch ops that move no data (views, allocation, metadata) or only initialize a buffer
FREE_TORCH_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "view", "_unsafe_view",
                  "as_strided", "t", "transpose", "permute", "expand", "slice", "select", "unsqueeze", "squeeze",
                  "detach", "alias", "lift_fresh", "split", "split_with_sizes", "chunk", "unbind", "diagonal",
                  "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "zero_", "arange",
                  "scalar_tensor", "_local_scalar_dense", "view_as_real", "view_as_complex", "unfold", "narrow"}


@contextlib.contextmanager
def _torch_traffic() -> Iterator[dict[str, int]]:
    """Within this block, the bytes each torch op moves (its tensor arguments and results), by op name: the work an
    entry does outside its Triton kernels (casts, copies, elementwise math, concatenations)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    moved: dict[str, int] = {}

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = func.overloadpacket.__name__
            made = [t for t in tree_leaves(out) if hasattr(t, "element_size")]
            if made and name not in FREE_TORCH_OPS:  # an op without a tensor result (x.device) moves nothing
                tensors = made + [t for t in tree_leaves((args, kwargs)) if hasattr(t, "element_size")]
                moved[name] = moved.get(name, 0) + sum(t.numel() * t.element_size() for t in tensors)
            return out

    with Recorder():
        yield moved


def _storages(value: Any) -> dict:
    """Storage -> bytes of the tensors in a value (a tensor, or a tuple/list/dict of them)."""
    if hasattr(value, "untyped_storage"):
        return {value.untyped_storage()._cdata: value.numel() * value.element_size()}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return {k: v for item in items for k, v in _storages(item).items()}


@contextlib.contextmanager
def _keeping_int_values(launches: list, task_file: str) -> Iterator[None]:
    """Inside intercept_launches: also keep each launch's int arguments by name (the binder keeps only types),
    the bytes of its tensors and which data they are, and the task-file line that launched it."""
    from triton.runtime.jit import JITFunction

    record = JITFunction.run
    held: list = []  # the tensors launched with stay alive, so no later tensor reuses their storage's identity

    def run(self, *args, **kwargs):
        before = len(launches)
        result = record(self, *args, **kwargs)
        site = next((f"{f.filename}:{f.lineno}" for f in reversed(traceback.extract_stack())
                     if f.filename == task_file), None)
        names = [p.name for p in self.params]
        bound = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
        for launch in launches[before:]:
            launch.values = {k: v for k, v in bound.items() if isinstance(v, int) and not isinstance(v, bool)}
            launch.tensor_bytes = sum(v.numel() * v.element_size() for v in bound.values() if hasattr(v, "element_size"))
            launch.tensors = {k: ((v.untyped_storage()._cdata, v.storage_offset(), v.numel()), v.numel() * v.element_size())
                              for k, v in bound.items() if hasattr(v, "untyped_storage")}
            held.extend(v for v in bound.values() if hasattr(v, "untyped_storage"))
            launch.site = site
        return result

    JITFunction.run = run
    try:
        yield
    finally:
        JITFunction.run = record


def _int_values(launch: Any) -> dict[str, int]:
    """Runtime int arguments (not declared constexpr) and their values; an int equal to 1 is among them."""
    declared = {p.name for p in launch.fn.params if p.is_constexpr}
    return {k: v for k, v in getattr(launch, "values", {}).items() if k not in declared}


def _lines(launches) -> list[int]:
    """The task-file lines that launched these kernels (the report shows them as the finding's source)."""
    return sorted({int(l.site.rpartition(":")[2]) for l in launches if l.site})


def cite_launches(findings: list[Finding], facts: LaunchFacts | None) -> list[Finding]:
    """Findings about a whole kernel (ncu's throughput, occupancy, waves: no source line of their own) cite the
    task-file lines that launch it, where its grid and config are chosen; the kernel is the one the message names."""
    for f in findings:
        if f.kernel_lines or facts is None:
            continue
        kernel = f.message.split(":", 1)[0]
        f.kernel_lines = _lines([l for l in facts.launches if l.kernel == kernel])
    return findings


def _case_label(facts: LaunchFacts, index: int) -> str:
    case = facts.cases[index] if index < len(facts.cases) else {}
    shape = ", ".join(f"{k}={v}" for k, v in case.items()) if isinstance(case, dict) else str(case)
    return f"case {index} ({shape})"


def _slow(roofline: dict[int, float] | None, cases: list[int]) -> str:
    if not roofline:
        return ""
    known = [f"{roofline[c]:.0%}" for c in cases if c in roofline]
    return f"; those cases run at {', '.join(known)} of the roofline" if known else ""


def findings(facts: LaunchFacts, path: str, roofline: dict[int, float] | None = None) -> list[Finding]:
    """Launch-level root causes: a grid below the SM count on some cases (low_occupancy, tiny grid), and cases
    whose specialization drops 16-divisibility on address/mask arguments (misaligned_access).
    `roofline` (case -> fraction of the roofline, when measured) weighs a cause by how slow its cases are.
    The mechanisms behind them (launch_causes.py) come with them: unfused launches, unsplit serial loops."""
    from kopt.diagnose import launch_causes

    out = []
    n_cases = facts.n_cases
    tiny: dict[int, list[CaseLaunch]] = {}
    for l in facts.launches:
        if l.programs < facts.sms:
            tiny.setdefault(l.case, []).append(l)
    if tiny:
        cases = sorted(tiny)
        worst = min((l for ls in tiny.values() for l in ls), key=lambda l: l.programs)
        what = "; ".join(f"{_case_label(facts, c)}: {', '.join(f'{l.kernel} grid {l.programs}' for l in tiny[c])}"
                         for c in cases)
        confidence = TINY_GRID_CONFIDENCE * breadth(facts, cases) * _weight(roofline, cases)
        out.append(Finding(
            "low_occupancy", "L1",
            f"{worst.kernel}: tiny grid: {len(cases)} of {n_cases} cases launch fewer programs than the "
            f"{facts.sms} SMs (as few as {worst.programs}), so most SMs idle{_slow(roofline, cases)}",
            round(confidence, 2),
            [Evidence("L1", "launch", f"{_case_label(facts, c)}: " + ", ".join(
                f"{l.kernel} grid {list(l.grid)} = {l.programs} programs" for l in tiny[c]),
                {"case": c, "programs": [l.programs for l in tiny[c]], "sms": facts.sms}, tiny[c][0].site or path)
                for c in cases],
            _lines(l for ls in tiny.values() for l in ls), [f"the grid must have at least {facts.sms} programs (a few waves) on every case: split the reduced "
                 "or looped dimension across programs (partials + a second pass, or atomics), or use smaller tiles"],
        ))
        out[-1].message += f" ({what})" if len(what) < 300 else ""
        out += launch_causes.serial_findings(out[-1], {l.kernel for ls in tiny.values() for l in ls}, path)
    thin = [l for l in facts.launches if l.case not in tiny and l.warps_per_sm(facts.sms) < LOW_OCCUPANCY_WARPS
            and ".dot(" not in getattr(l.launch.fn, "src", ".dot(")]  # a GEMM's few resident warps are by design
    if thin:
        cases = sorted({l.case for l in thin})
        worst = min(thin, key=lambda l: l.warps_per_sm(facts.sms))
        out.append(Finding(
            "low_occupancy", "L1",
            f"{worst.kernel}: thin grid: {len(cases)} of {n_cases} cases launch {worst.programs} programs of "
            f"{worst.num_warps} warps on {facts.sms} SMs: about {worst.warps_per_sm(facts.sms):.0f} warps per SM, too "
            f"few to keep loads in flight{_slow(roofline, cases)}",
            round(THIN_GRID_CONFIDENCE * breadth(facts, cases) * _weight(roofline, cases), 2),
            [Evidence("L1", "launch", f"{_case_label(facts, l.case)}: {l.kernel} grid {l.programs} programs x "
                      f"{l.num_warps} warps", {"case": l.case, "programs": l.programs, "num_warps": l.num_warps,
                                               "sms": facts.sms}, l.site or path) for l in thin],
            _lines(thin), [f"put at least {LOW_OCCUPANCY_WARPS} warps on each SM: more programs (one per row or "
                           "tile) or more warps per program"]))
    small = [l for l in facts.launches if l.tensor_bytes and l.programs >= MANY_PROGRAMS * facts.sms
             and l.tensor_bytes / l.programs <= TINY_PROGRAM_BYTES]
    if small:
        cases = sorted({l.case for l in small})
        per = {l.case: l.tensor_bytes / l.programs for l in small}
        confidence = TINY_PROGRAMS_CONFIDENCE * breadth(facts, cases) * _weight(roofline, cases)
        out.append(Finding(
            "too_many_programs", "L1",
            f"{small[0].kernel}: {', '.join(f'case {c}' for c in cases)} launch up to {max(l.programs for l in small)} "
            f"programs that each move at most {max(per.values()):.0f} B (all tensor bytes / programs): launch and "
            f"scheduling overhead, not bandwidth, bound them{_slow(roofline, cases)}",
            round(confidence, 2),
            [Evidence("L1", "launch", f"{_case_label(facts, l.case)}: {l.kernel} grid {l.programs} programs for "
                      f"{l.tensor_bytes} tensor bytes = {l.tensor_bytes / l.programs:.0f} B per program",
                      {"case": l.case, "programs": l.programs, "tensor_bytes": l.tensor_bytes}, l.site or path)
             for l in small],
            _lines(small), ["each program should move several KB: cover more rows/tokens per program (2-D tiles) or flatten "
                 "the grid so no lanes sit masked"]))
        if launch_causes.entity_grid(path, small[0].kernel):  # the tile is the problem's row: raising a block cannot help
            out[-1].message += ": one program per item of the grid's axes, whatever the kernel's tile"
            out[-1].evidence[0].data.update(explains=["small_block", "non_vectorized_load"],
                                            others=sorted({l.kernel for l in facts.launches} - {small[0].kernel}))
        else:
            out += launch_causes.tiled_programs_findings(out[-1], small[0].kernel, path)
    bad: dict[int, list[tuple[CaseLaunch, list[str]]]] = {}
    for l in facts.launches:
        args = l.misaligned()
        if args:
            bad.setdefault(l.case, []).append((l, args))
    if bad:
        cases = sorted(bad)
        aligned = sorted({l.case for l in facts.launches} - set(cases))
        args = sorted({a for ls in bad.values() for _, a_list in ls for a in a_list})
        confidence = MISALIGNED_CONFIDENCE * (0.5 + 0.5 * len(cases) / n_cases) * _weight(roofline, cases)
        lead = bad[cases[0]][0][0]
        kernel = lead.kernel
        fid = "masked_access" if set(args) <= lead.mask_only else "misaligned_access"
        used = "mask bounds" if fid == "masked_access" else "load/store addresses or masks"
        contrast = f"; {', '.join(f'case {c}' for c in aligned)} keep it" if aligned else ""
        out.append(Finding(
            fid, "L1",
            f"{kernel}: {', '.join(f'case {c}' for c in cases)} lose 16-divisibility on "
            f"{', '.join(f'`{a}`' for a in args)} (used in {used}), so Triton cannot prove "
            f"16-byte alignment and those cases' accesses go narrow{contrast}{_slow(roofline, cases)}",
            round(confidence, 2),
            [Evidence("L1", "launch", f"{_case_label(facts, c)}: {l.kernel} specialization has no "
                      f"tt.divisibility=16 on {', '.join(a)}", {"case": c, "args": a,
                                                                  "values": {x: l.ints.get(x) for x in a if x in l.ints}},
                      l.site or path) for c in cases for l, a in bad[c]],
            _lines(l for ls in bad.values() for l, _ in ls), [f"every case needs 16-divisible strides/bounds on {', '.join(args)}: pad rows to a multiple of 16 "
                 "elements, split off an unmasked aligned body (mask only the tail), or read from the 16-byte-"
                 "aligned address below the row start"] + _keep_aligned(aligned),
        ))
    return (out + launch_causes.unfused_findings(facts, path) + launch_causes.spill_findings(facts, path)
            + launch_causes.pipelining_findings(facts, path))


def _keep_aligned(aligned: list[int]) -> list[str]:
    """The condition an alignment fix must also meet when some cases are aligned already. On 20 held-out operators
    (evals/RESULTS.md, "Synthesis payoff on held-out operators") 12 of 24 alignment rewrites were slower on the cases
    the finding did not concern, and the repliers' next rounds dispatched by shape instead."""
    if not aligned:
        return []
    return [f"{', '.join(f'case {c}' for c in aligned)} are aligned already: keep their code path as it is and send only "
            "the misaligned shapes down the new one (dispatch by shape in the entry); a change that slows any case is "
            "not a win"]


def _weight(roofline: dict[int, float] | None, cases: list[int]) -> float:
    """How much the cases a cause touches matter: 1 without measurements; scaled down when they are already fast."""
    if not roofline:
        return 1.0
    known = [roofline[c] for c in cases if c in roofline]
    if not known:
        return 1.0
    slowest = min(known)
    others = [v for c, v in roofline.items() if c not in cases]
    if others and slowest >= min(others):
        return 0.7  # the cause's cases are not the slow ones
    return 1.0 if slowest < 0.6 else 0.85


def tail_idle(waves: float) -> float:
    """The share of all slot-time the last wave leaves idle: 1.4 waves run as 2, idle for 0.6 of them, 30 %."""
    return (math.ceil(waves) - waves) / math.ceil(waves) if waves > 0 else 0.0


def material_tail(waves: float) -> bool:
    """A ragged last wave worth a finding: few waves, and a large share of the slot-time idle."""
    return 1 <= waves <= TAIL_MAX_WAVES and tail_idle(waves) >= TAIL_MIN_IDLE


def tail_findings(facts: LaunchFacts, blocks_per_sm: dict[str, int], path: str) -> list[Finding]:
    """tail_effect: cases whose grid fills only part of its last wave, given each kernel's resident blocks per SM."""
    hits = []
    for l in facts.launches:
        slots = facts.sms * max(1, blocks_per_sm.get(l.kernel, 1))
        if l.programs < facts.sms or l.programs <= slots:
            continue
        waves = l.programs / slots
        if material_tail(waves):
            hits.append((l, waves, tail_idle(waves), slots))
    if not hits:
        return []
    l0 = max(hits, key=lambda h: h[2])
    return [Finding(
        "tail_effect", "L3",
        f"{l0[0].kernel}: {len(hits)} case(s) run {', '.join(f'{h[1]:.1f}' for h in hits)} waves of "
        f"{l0[3]} resident programs; the last wave leaves up to {l0[2]:.0%} of the slots idle",
        TAIL_CONFIDENCE,
        [Evidence("L3", "launch", f"{_case_label(facts, l.case)}: {l.programs} programs / {slots} slots "
                  f"({facts.sms} SMs x {slots // facts.sms} resident blocks) = {waves:.2f} waves",
                  {"case": l.case, "programs": l.programs, "slots": slots}, l.site or path)
         for l, waves, _, slots in hits],
        _lines(h[0] for h in hits), ["size the grid to whole waves (a persistent grid of SMs x resident blocks looping over tiles), or "
             "tiles small enough for many waves"])]


def stride_values(findings: list[Finding], facts: LaunchFacts | None) -> list[Finding]:
    """An L1 strided access (a runtime stride on the lanes' axis) checked against the value every case passes: a
    stride that is never 1 is no hypothesis (the JIT makes an argument equal to 1 a constant, and contiguous); one
    that is 1 in every case is no problem at all."""
    if facts is None:
        return findings
    for f in findings:
        data = next((e.data for e in f.evidence if e.data.get("signal") == "strided_access"), None)
        stride, kernel = (data or {}).get("stride"), (data or {}).get("kernel")
        values = [l.ints.get(stride) for l in facts.launches if l.kernel == kernel] if stride else []
        if not values or None in values:
            continue
        low, high = min(values), max(values)
        if low > 1:
            f.confidence = round(max(f.confidence, STRIDE_CONFIRMED), 2)
            f.message += f" ({stride} is {low}{f'-{high}' if high > low else ''} in every case, never 1)"
        elif high == 1:
            f.confidence = round(f.confidence * 0.3, 2)
            f.message += f" ({stride} is 1 in every case: the JIT makes it a constant, so the access is contiguous)"
        else:
            continue
        site = next(l.site for l in facts.launches if l.kernel == kernel) or ""
        f.evidence.append(Evidence("L1", "launch", f"{kernel}: {stride} = {sorted(set(values))[:6]} over the cases",
                                   {"kernel": kernel, "stride": stride, "values": values}, site))
    return findings


def chain_lengths(findings: list[Finding], facts: LaunchFacts | None) -> list[Finding]:
    """A serial chain (one position of an axis per loop trip into a carried accumulator) checked against the axis
    length every case passes: an axis that one tile could hold in every case (an expert count, a head dim) is no
    reduction to split across programs but a per-position loop where one tile and a block reduction would do
    (scalar_loop, ahead of the serial_reduction it was read as); a long axis, or positions an inner loop streams in
    tiles (one tile cannot hold them), stays serial_reduction, with a tile of rows per trip (scalar_loop) as the lesser
    reading beside it."""
    if facts is None:
        return findings
    out = []
    for f in findings:
        data = next((e.data for e in f.evidence if e.data.get("signal") == "serial_chain"), None)
        axis, kernel = (data or {}).get("axis"), (data or {}).get("kernel")
        values = [l.ints.get(axis) for l in facts.launches if l.kernel == kernel] if axis else []
        if f.id != "serial_reduction" or not values or None in values or data.get("streams"):
            out.append(f)
            continue
        if max(values) > SHORT_CHAIN:
            out += [f, _rows_per_trip(f, kernel, axis, values)]
            continue
        site = next(l.site for l in facts.launches if l.kernel == kernel) or ""
        out.append(Finding(
            "scalar_loop", "L1",
            f"{kernel}: the loop over {axis} takes one position per trip, but {axis} is at most {max(values)} in every "
            f"case: one tile of the whole axis and a block reduction (tl.sum, tl.max) or scan would do the loop's work "
            f"at once, without its chain of small dependent loads",
            round(max(f.confidence, SHORT_CHAIN_CONFIDENCE), 2),
            [*f.evidence, Evidence("L1", "launch", f"{kernel}: {axis} = {sorted(set(values))[:6]} over the cases",
                                   {"kernel": kernel, "axis": axis, "values": values}, site)],
            f.kernel_lines, [f"the whole {axis} axis (at most {max(values)}) fits one tile: load it with tl.arange and "
                             "reduce with a block op"], ["vectorize_scalar_loop"]))
        f.confidence = round(f.confidence * 0.5, 2)
        f.message += f" (secondary to scalar_loop: {axis} <= {max(values)} fits one tile)"
        out.append(f)
    return out


def _rows_per_trip(chain: Finding, kernel: str, axis: str, values: list[int]) -> Finding:
    """The other fix of a long chain of one row per trip: take a tile of rows per trip (a [BLOCK, row] load and a
    block reduction), shortening the chain BLOCK-fold without splitting the axis. It ranks under the split."""
    return Finding(
        "scalar_loop", "L1",
        f"{kernel}: the loop over {axis} (up to {max(values)} trips) takes one row per trip: a tile of rows per trip "
        f"and a block reduction would shorten its chain of small dependent loads as many times as the tile has rows",
        round(chain.confidence * ROWS_PER_TRIP_SHARE, 2),
        [Evidence("L1", "source", e.summary, {"kernel": kernel, "axis": axis, "values": values}, e.location)
         for e in chain.evidence[:1]], chain.kernel_lines,
        [f"load a [BLOCK, row] tile of the {axis} axis per trip and reduce it with a block op"], ["vectorize_scalar_loop"])


INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b if b else None}


def _int_expr(text: str, values: dict[str, Any]) -> int | None:
    """The value of a loop bound (`C`, `K - k0`, `tl.cdiv(K, BLOCK_K)`) under one launch's arguments, else None."""
    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            v = values.get(n.id)
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(n, ast.BinOp) and type(n.op) in INT_OPS:
            a, b = ev(n.left), ev(n.right)
            return None if a is None or b is None else INT_OPS[type(n.op)](a, b)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "cdiv" and len(n.args) == 2:
            a, b = ev(n.args[0]), ev(n.args[1])
            return -(-a // b) if a is not None and b else None
        return None

    try:
        return ev(ast.parse(text, mode="eval").body)
    except SyntaxError:
        return None


def dot_loop_trips(findings: list[Finding], facts: LaunchFacts | None) -> list[Finding]:
    """A dot loop nested in another loop checked against the trip count every case gives it: a few trips in every
    case (a conv's channel loop of 1-2 blocks per filter tap) ground no_software_pipelining, since the pipeline
    refills on each outer trip; a long inner loop reaches its steady state and the signal sinks."""
    if facts is None:
        return findings
    for f in findings:
        data = next((e.data for e in f.evidence if e.data.get("signal") == "nested_dot_loop"), None)
        if data is None:
            continue
        trips = []
        for l in (l for l in facts.launches if l.kernel == data.get("kernel")):
            values = getattr(l.launch, "values", None) or l.ints
            start, stop, step = (_int_expr(data[k], values) for k in ("start", "stop", "step"))
            trips.append(-(-(stop - start) // step) if None not in (start, stop, step) and step > 0 else None)
        if not trips or None in trips:
            continue
        if max(trips) <= SHORT_PIPELINE:
            f.confidence = round(max(f.confidence, SHORT_PIPELINE_CONFIDENCE), 2)
            f.message += f" (the inner loop runs {min(trips)}-{max(trips)} trips in every case)"
            f.evidence.append(Evidence("L1", "launch", f"{data['kernel']}: inner dot loop trips = {sorted(set(trips))[:6]} "
                                       "over the cases", {"kernel": data["kernel"], "trips": trips}))
        else:
            f.confidence = round(f.confidence * 0.5, 2)
    return findings


def grid_extents(findings: list[Finding], facts: LaunchFacts | None) -> list[Finding]:
    """An L1 axis-invariant tile (a tile streamed at an address that ignores one grid axis) checked against the
    grids every case launches: the programs along that axis read it extent times over, so an axis wider than 1 in
    every case grounds the redundancy, and one that is always 1 (the axis is never used) removes it."""
    if facts is None:
        return findings
    for f in findings:
        data = next((e.data for e in f.evidence if e.data.get("signal") == "axis_invariant_tile"), None)
        if data is None or data.get("axis") is None:
            continue
        axis, kernel = data["axis"], data.get("kernel")
        extents = [l.grid[axis] if len(l.grid) > axis else 1 for l in facts.launches if l.kernel == kernel]
        if not extents:
            continue
        if min(extents) > 1:
            f.confidence = round(max(f.confidence, REREAD_CONFIRMED), 2)
            again = (f"the programs sharing one value of `{data['grouped']}` read it again" if data.get("grouped")
                     else "read that many times")
            f.message += f" (grid axis {axis} is {min(extents)}-{max(extents)} wide over the cases: {again})"
        elif max(extents) == 1:
            f.confidence = round(f.confidence * 0.3, 2)
            f.message += f" (grid axis {axis} is 1 in every case: nothing is re-read)"
        else:
            continue
        site = next(l.site for l in facts.launches if l.kernel == kernel) or ""
        f.evidence.append(Evidence("L1", "launch", f"{kernel}: grid axis {axis} = {sorted(set(extents))[:6]} over the cases",
                                   {"kernel": kernel, "axis": axis, "extents": extents}, site))
    return findings


def bad_cases(finding: Finding) -> list[int]:
    """The cases a launch finding names (its evidence's `case`), in order."""
    return list(dict.fromkeys(e.data["case"] for e in finding.evidence if e.source == "launch" and "case" in e.data))


def _widths(report: Any) -> dict[tuple, dict]:
    """(line key, kind, column) -> memory fact of every tensor load/store L3 attributed."""
    return {(key, f["kind"], f.get("col")): f for key, facts in report.lines.items() for f in facts
            if f.get("kind") in ("load", "store") and f.get("vector_bytes")}


def confirm(finding: Finding, facts: LaunchFacts, case: int, case_report: Any, base_report: Any,
            base_case: int) -> Finding | None:
    """An L3 finding for a launch finding's case: the loads/stores its own specialization compiles narrower than the
    compiled aligned case (or below 16 B when every case is misaligned), weighted by the bytes they move.
    None when that case's code is no narrower, or only where its tile gives each thread no more bytes than it moves
    (a small tile, not alignment, sets that width), or, with no aligned case to compare, where L3 names a more
    fundamental reason first (a gather, a stride, a modulo): the launch fact did not cost vector width."""
    base = _widths(base_report) if base_report is not None else {}
    narrowed = []
    for key, fact in _widths(case_report).items():
        before = base.get(key, {}).get("vector_bytes", 16)
        tile_bound = fact.get("thread_bytes", 16) <= fact["vector_bytes"]  # the tile gives each thread no more
        deeper = base_report is None and (fact.get("causes") or [None])[0] in DEEPER_WIDTH_CAUSES
        if fact["vector_bytes"] < min(16, before) and not tile_bound and not deeper:
            narrowed.append((key, fact, before))
    if not narrowed:
        return None
    share = sum(f.get("traffic_share", 0.0) for _, f, _ in narrowed)
    label = _case_label(facts, case)
    than = f"case {base_case}" if base_report is not None else "16-byte vectors"
    lines = [f"line {k[0].rpartition(':')[2]} {f['kind']} of {', '.join(f.get('pointer_args') or ['?'])} "
             f"{f['vector_bytes'] * 8}-bit ({than}: {b * 8}-bit)" for k, f, b in narrowed[:4]]
    # what the narrowing costs: the bytes it slows in that case, and the share of the cases it holds on (a width lost
    # in one case of six is not what to fix first for the task)
    cases = len(bad_cases(finding)) / facts.n_cases
    confidence = min(0.95, finding.confidence + 0.1) * min(1.0, max(0.3, share / 0.5)) * (0.5 + 0.5 * cases)
    evidence = [Evidence("L3", "ptx" if f.get("ptx_bytes") else "ttgir",
                         f"{label}: {f['summary']} ({than}: {b * 8}-bit); {f.get('traffic_share', 0):.0%} of "
                         "the kernel's bytes", {"case": case, "vector_bytes": f["vector_bytes"], "aligned_bytes": b,
                                                 "why": f.get("why", [])}, k[0]) for k, f, b in narrowed[:6]]
    kernel_lines = sorted({int(k[0].rpartition(":")[2]) for k, _, _ in narrowed})
    return Finding(finding.id, "L3",
                   f"{finding.message.split(':', 1)[0]}: {label} compiles its accesses narrower: {'; '.join(lines)} "
                   f"({share:.0%} of the kernel's bytes); {finding.message.split(': ', 1)[-1]}",
                   round(confidence, 2), evidence, kernel_lines, list(finding.conditions))
