"""Source locations in lowered IR: the MLIR `#loc` table of TTIR/TTGIR and PTX `.loc`/`.file`.

L3 speaks in kernel source lines, so every IR fact must be mapped back through these.
For inlined helpers (`callsite(callee at caller)`) the outermost frame is the line in the
kernel the user wrote; the innermost frame is kept as `via`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LOC_DEF = re.compile(r"^#(loc\d*) = loc\((.*)\)\s*$", re.M)
_FILE_LINE = re.compile(r'^"([^"]*)":(\d+):(\d+)')
_NAMED = re.compile(r'^"[^"]*"\((.*)\)$')
_CALLSITE = re.compile(r"^callsite\((.*) at (.*)\)$")
_ALIAS = re.compile(r"^#(loc\d*)$")
_FUSED = re.compile(r"^fused(?:<[^>]*>)?\[(.*)\]$")


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int
    via: tuple[int, int] | None = None  # (line, col) inside an inlined helper

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class LocTable:
    """Resolves `loc(...)` expressions of one MLIR module printed with debug info."""

    def __init__(self, ir: str):
        self._raw = {name: body for name, body in _LOC_DEF.findall(ir)}
        self._cache: dict[str, SourceLoc | None] = {}

    def resolve(self, expr: str, _depth: int = 0) -> SourceLoc | None:
        """`expr` is what sits inside `loc(...)`: `#loc12`, `"f.py":3:4`, `"x"(#loc2)`, `callsite(..)`."""
        expr = expr.strip()
        if _depth > 64:
            return None
        if m := _ALIAS.match(expr):
            name = m.group(1)
            if name not in self._cache:
                self._cache[name] = None  # guards cycles
                body = self._raw.get(name)
                self._cache[name] = self.resolve(body, _depth + 1) if body else None
            return self._cache[name]
        if m := _FILE_LINE.match(expr):
            return SourceLoc(m.group(1), int(m.group(2)), int(m.group(3)))
        if m := _NAMED.match(expr):
            return self.resolve(m.group(1), _depth + 1)
        if m := _CALLSITE.match(expr):
            inner = self.resolve(m.group(1), _depth + 1)
            outer = self.resolve(m.group(2), _depth + 1)
            if outer is None:
                return inner
            via = (inner.line, inner.col) if inner else None
            return SourceLoc(outer.file, outer.line, outer.col, outer.via or via)
        if m := _FUSED.match(expr):
            for part in _split_top(m.group(1)):
                if loc := self.resolve(part, _depth + 1):
                    return loc
        return None


def _split_top(text: str) -> list[str]:
    """Split on commas that are not nested in parentheses or brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_PTX_INLINED_AT = re.compile(r"@\[\s*([^:\]]+):(\d+):(\d+)")


def ptx_lines(ptx: str) -> list[tuple[SourceLoc | None, str]]:
    """Every PTX instruction line paired with the source location in force there.

    An inlined helper's `.loc` carries its call site as a `@[ file:line:col ]` comment;
    the outermost call site wins, like `LocTable.resolve` does for `callsite`.
    """
    files = {num: path for num, path in _PTX_FILE.findall(ptx)}
    current: SourceLoc | None = None
    out: list[tuple[SourceLoc | None, str]] = []
    for raw in ptx.splitlines():
        if m := _PTX_LOC.match(raw):
            file_no, line, col, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            path = files.get(file_no, file_no)
            if line == 0:
                current = None
                continue
            calls = _PTX_INLINED_AT.findall(rest)
            if calls:
                _, oline, ocol = calls[-1]
                current = SourceLoc(path, int(oline), int(ocol), (line, col))
            else:
                current = SourceLoc(path, line, col)
            continue
        text = raw.split("//", 1)[0].strip()
        if text and not text.startswith("."):
            out.append((current, text))
    return out
