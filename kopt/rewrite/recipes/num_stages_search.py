"""Try other num_stages only: software pipelining depth at the launch."""

from __future__ import annotations

import libcst.matchers as m

from kopt.rewrite.cst import NotApplicable, Source, has_call
from kopt.rewrite.recipes.base import Context, Proposal
from kopt.rewrite.recipes.launch_config_search import launch_config_search
from kopt.rewrite.recipes.launch_space import autotune_config_search, launched_autotuned, only_launch


def num_stages_search(src: Source, ctx: Context) -> Proposal:
    if launched_autotuned(src):
        return autotune_config_search(src, ctx, ("num_stages",), "num_stages_search")
    launch, kernel = only_launch(src)
    if not any(has_call(loop, "load") for loop in m.findall(kernel, m.For() | m.While())):
        raise NotApplicable(f"{launch.kernel} has no loop that loads: software pipelining (num_stages) has nothing to overlap")
    return launch_config_search(src, ctx, only=("num_stages",), recipe="num_stages_search")
