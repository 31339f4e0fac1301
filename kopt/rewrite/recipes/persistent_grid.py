"""A persistent grid: a few programs per SM loop over the tiles (grid-stride)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, calls, expr
from kopt.rewrite.recipes.base import Context, Proposal, Variant
from kopt.rewrite.recipes.launch_space import AddArgs, only_launch


def persistent_grid(src: Source, ctx: Context) -> Proposal:
    """A 1-D kernel that starts with `pid = tl.program_id(0)` becomes a grid-stride loop over its tiles,
    launched with a few programs per SM instead of one program per tile."""
    launch, kernel = only_launch(src)
    first = kernel.body.body[0]
    if not m.matches(first, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                value=m.Call(func=m.Attribute(attr=m.Name("program_id"))))])):
        raise NotApplicable(f"{launch.kernel} does not start with `pid = tl.program_id(0)`")
    if len(calls(kernel, "program_id")) != 1 or calls(kernel, "num_programs"):
        raise NotApplicable(f"{launch.kernel} uses more than one grid axis; a multi-axis grid needs a hand-written tile loop")
    if m.findall(kernel, m.Return() | m.For() | m.While()):
        raise NotApplicable(f"{launch.kernel} has loops or early returns; wrapping it in a tile loop is not mechanical")
    where = launch.grid
    if isinstance(where, cst.Name):
        bound = src.assignments(launch.function, where.value)
        if len(bound) != 1:
            raise NotApplicable(f"line {launch.line}: the grid `{where.value}` is not assigned exactly once")
        where = bound[0][1]
    if not isinstance(where, cst.Tuple) or len(where.elements) != 1:
        raise NotApplicable(f"line {src.line(where)}: the grid `{src.code(where)}` is not a 1-D tuple (a lambda of the "
                            "config would need the tile count passed explicitly)")
    tiles = src.code(where.elements[0].value)
    pid = first.body[0].targets[0].target.value
    loop = cst.For(target=cst.Name(pid), iter=expr("tl.range(tl.program_id(0), num_tiles, tl.num_programs(0))"),
                   body=cst.IndentedBlock(body=list(kernel.body.body[1:])))
    params = kernel.params.with_changes(params=[*kernel.params.params, cst.Param(cst.Name("num_tiles"))])
    new_kernel = kernel.with_changes(params=params, body=kernel.body.with_changes(body=[loop]))
    helper = cst.parse_module(
        "def _num_programs():\n"
        "    \"\"\"A few resident programs per SM (the interpreter has no SMs: 4).\"\"\"\n"
        "    if torch.cuda.is_available():\n"
        "        return 4 * torch.cuda.get_device_properties(0).multi_processor_count\n"
        "    return 4\n").body[0]
    tiles_arg = cst.Arg(keyword=cst.Name("num_tiles"), value=expr(tiles),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    source = src.rewrite({
        id(kernel): cst.FlattenSentinel([new_kernel, helper.with_changes(leading_lines=kernel.leading_lines)]),
        id(where): expr(f"(min({tiles}, _num_programs()),)"),
        id(launch.call): AddArgs([tiles_arg]),
    })
    return Proposal("persistent_grid", f"{launch.kernel}: a grid-stride loop over {tiles} tiles, 4 programs per SM",
                    [Variant("persistent", source)])
