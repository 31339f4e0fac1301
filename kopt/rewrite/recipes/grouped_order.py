"""Grouped program order for a 2-D-grid matmul: tiles that share operands run together, for L2 reuse."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, names_in, runtime_params
from kopt.rewrite.recipes.base import Context, Proposal, Variant

GROUPED = """num_pid_m = tl.cdiv({M}, {BM})
num_pid_in_group = {G} * {num_pid_n}
group_id = {pid} // num_pid_in_group
first_pid_m = group_id * {G}
group_size_m = min(num_pid_m - first_pid_m, {G})
{pid_m} = first_pid_m + (({pid} % num_pid_in_group) % group_size_m)
{pid_n} = ({pid} % num_pid_in_group) // group_size_m
"""


def grouped_order(src: Source, ctx: Context) -> Proposal:
    """Row-major program order (pid_m = pid // n, pid_n = pid % n) -> GROUP_SIZE_M-grouped order for L2 reuse."""
    group = int(ctx.params.get("GROUP_SIZE_M", 8))
    for name, kernel in src.kernels().items():
        if "group_id" in names_in(kernel):
            raise NotApplicable(f"{name} already uses a grouped program order")
        found = _row_major_split(src, kernel)
        if found is None:
            continue
        div_stmt, mod_stmt, pid, pid_m, pid_n, num_pid_n = found
        bm = _block_of(kernel, pid_m)
        big_m = _size_of(src, kernel, num_pid_n)
        if bm is None or big_m is None:
            raise NotApplicable(f"{name}: cannot tell the M size and block from `{pid_m}` (line {src.line(div_stmt)})")
        code = GROUPED.format(M=big_m, BM=bm, G=group, num_pid_n=num_pid_n, pid=pid, pid_m=pid_m, pid_n=pid_n)
        new = cst.parse_module(code).body
        indented = [s.with_changes(leading_lines=div_stmt.leading_lines) if i == 0 else s for i, s in enumerate(new)]
        source = src.rewrite({id(div_stmt): cst.FlattenSentinel(indented), id(mod_stmt): cst.RemoveFromParent()})
        return Proposal("grouped_order", f"{name} line {src.line(div_stmt)}: program order grouped by "
                        f"GROUP_SIZE_M={group} along M", [Variant(f"GROUP_SIZE_M={group}", source)])
    raise NotApplicable("no 1-D-grid kernel splitting its program id as pid // num_pid_n, pid % num_pid_n "
                        "(a 2-D grid would need the launch changed too)")


def _row_major_split(src: Source, kernel: cst.FunctionDef):
    stmts = {}
    for line in m.findall(kernel, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])):
        assign = line.body[0]
        stmts[assign.targets[0].target.value] = (line, assign.value)
    for target, (line, value) in stmts.items():
        if m.matches(value, m.BinaryOperation(left=m.Name(), operator=m.FloorDivide(), right=m.Name())):
            pid, n = value.left.value, value.right.value
            for other, (line2, value2) in stmts.items():
                if m.matches(value2, m.BinaryOperation(left=m.Name(pid), operator=m.Modulo(), right=m.Name(n))):
                    return line, line2, pid, target, other, n
    return None


def _block_of(kernel: cst.FunctionDef, pid_m: str) -> str | None:
    for op in m.findall(kernel, m.BinaryOperation(operator=m.Multiply())):
        if m.matches(op.left, m.Name(pid_m)) and isinstance(op.right, cst.Name):
            return op.right.value
    return None


def _size_of(src: Source, kernel: cst.FunctionDef, num_pid_n: str) -> str | None:
    """The M size: the N size's counterpart in the kernel's parameters (N -> M, n -> m)."""
    for line in m.findall(kernel, m.Assign(targets=[m.AssignTarget(target=m.Name(num_pid_n))])):
        args = getattr(line.value, "args", ())
        if len(args) == 2 and isinstance(args[0].value, cst.Name):
            n_name = args[0].value.value
            candidate = n_name.replace("N", "M").replace("n", "m")
            if candidate in runtime_params(kernel):
                return candidate
    return None
