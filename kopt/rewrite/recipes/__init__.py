"""Deterministic recipes: source-to-source rewrites of a task file with libcst (formatting kept).

One file per recipe, `kopt/rewrite/recipes/<name>.py`, defining a function of that name; the names are the
catalog's (`kopt.patterns.RECIPES`), so a pattern can only name a recipe that exists. Each recipe takes the
task source and a Context (the pattern's params, the finding's lines, the task's tolerances and cases), checks
its preconditions, and either returns a Proposal (one or more full task files) or raises NotApplicable saying
why it does not apply and where. Launch-config recipes return several variants: on a GPU the loop benches them
and keeps the best; without one it validates the first (the middle of the search space) and records it untimed.
"""

from __future__ import annotations

import importlib
from typing import Callable

from kopt.patterns import RECIPES as RECIPE_NAMES
from kopt.rewrite.cst import NotApplicable, Source
from kopt.rewrite.recipes.base import Context, Proposal, Variant

Recipe = Callable[[Source, Context], Proposal]


def load(names: tuple[str, ...]) -> dict[str, Recipe]:
    """Each name's function, defined under that name in its own file kopt/rewrite/recipes/<name>.py."""
    return {name: getattr(importlib.import_module(f"{__name__}.{name}"), name) for name in names}


RECIPES: dict[str, Recipe] = load(RECIPE_NAMES)

__all__ = ["RECIPES", "Context", "Proposal", "Variant", "load", "propose"]


def propose(recipe: str, source: str, ctx: Context | None = None) -> Proposal:
    """Apply a recipe by name; raises NotApplicable with the reason when its preconditions fail."""
    if recipe not in RECIPES:
        raise NotApplicable(f"no deterministic recipe named {recipe!r} (known: {', '.join(RECIPES)})")
    return RECIPES[recipe](Source(source), ctx or Context())
