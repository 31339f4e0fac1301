"""A candidate may change kernels and their launch, never what it is judged by: the reference,
the inputs, the cases or the tolerances. Every candidate (recipe or LLM) passes this check first."""

from __future__ import annotations

import ast

PROTECTED = ("reference", "make_inputs", "CASES", "HELD_OUT", "SMALL_CASES", "TOLERANCES", "DTYPE_FLOPS",
             "flops", "bytes_moved", "Model", "get_inputs", "get_init_inputs")


def _top_level(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = ast.dump(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    found[t.id] = ast.dump(node.value) if node.value else ""
    return found


def check_candidate(original: str, candidate: str) -> str | None:
    """None when the candidate is an acceptable task file; else the reason it is rejected."""
    try:
        tree = ast.parse(candidate)
    except SyntaxError as exc:
        return f"line {exc.lineno}: syntax error: {exc.msg}"
    mine, theirs = _top_level(ast.parse(original)), _top_level(tree)
    if "entry" in mine and "entry" not in theirs:
        return "it defines no `entry` function"
    for name in PROTECTED:
        if mine.get(name) != theirs.get(name):
            return f"it {'changes' if name in mine else 'adds'} `{name}`, which the candidate is judged by (only kernels and their launch may change)"
    return None
