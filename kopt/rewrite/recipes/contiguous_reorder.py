"""Reordering a strided traversal: never mechanical, so it only says why (the LLM may try it)."""

from __future__ import annotations

from kopt.rewrite.cst import NotApplicable, Source
from kopt.rewrite.recipes.base import Context, Proposal


def contiguous_reorder(src: Source, ctx: Context) -> Proposal:
    """Only the mechanical case: a 2-D tile whose runtime-strided axis is the fast (last) one is not it."""
    kernel_names = ", ".join(src.kernels())
    raise NotApplicable(f"{kernel_names}: reordering a strided traversal changes which axis each thread walks and "
                        "the launch grid; not a mechanical rewrite (the LLM proposer can try it with the pattern's guidance)")
