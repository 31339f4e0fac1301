"""Definition-level chunking of C++, Python and TableGen on tree-sitter.

C++: one chunk per function, method, class or struct (a class that fits stays whole, so a
rewrite pattern keeps its matchAndRewrite and a pass keeps its runOnOperation); a class too big
is cut into its methods plus the rest. Python: functions and classes alike. TableGen: one chunk
per record (def, class, multiclass, defm, let block). Leading comments stay with what they
document. Whatever is left between definitions becomes `code` chunks that merge when tiny.
"""

from __future__ import annotations

import re
from functools import cache

from kopt.ingest.chunk import MAX_CHARS, MAX_LINES, Chunk

_CLASS_TYPES = {"class_specifier", "struct_specifier", "union_specifier"}
_PASS_BASE = re.compile(r"\bimpl::(\w+)Base\s*<|\bPassWrapper\s*<|\bOperationPass\s*<")
ERROR_LIMIT = 0.3  # a file whose top-level ERROR nodes cover more than this falls back to windows


class ParseFailure(Exception):
    """The grammar could not make sense of the file; the caller falls back to line windows."""


@cache
def parser(language: str):
    from tree_sitter_language_pack import get_parser

    return get_parser(language)


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _squash(text: str, limit: int = 200) -> str:
    return re.sub(r"\s+", " ", text).strip()[:limit]


def _check(root, size: int) -> None:
    bad = sum(c.end_byte - c.start_byte for c in root.children if c.type == "ERROR")
    if root.type == "ERROR" or (size and bad / size > ERROR_LIMIT):
        raise ParseFailure(f"{bad}/{size} bytes unparsed")


class _Builder:
    """Collects definition chunks and the glue between them, for one file."""

    def __init__(self, path: str, language: str, source: bytes):
        self.path, self.language, self.source = path, language, source
        self.chunks: list[Chunk] = []
        self.glue: list[tuple[int, int, str]] = []  # (start_row, end_row, group)
        self.enclosing = ""  # head of the too-big class whose members are being chunked one by one

    def add(self, node, start_row: int, kind: str, qualname: str, signature: str, passes=(), members=()) -> None:
        """members: names of methods defined inside a class kept whole, so symbol lookups find them too."""
        self.flush_glue()
        symbol = re.split(r"::|\.", qualname)[-1] if qualname else ""
        end_row = _end_row(node)
        body = "\n".join(self.source.decode("utf-8", "replace").splitlines()[start_row : end_row + 1])
        self.chunks.append(Chunk(self.path, self.language, kind, start_row + 1, end_row + 1, body,
                                 symbol, qualname, signature, list(dict.fromkeys(([symbol] if symbol else []) + list(members))),
                                 list(passes), context=self.enclosing))

    def add_glue(self, start_row: int, end_row: int, group: str) -> None:
        self.glue.append((start_row, end_row, group))

    def flush_glue(self) -> None:
        if not self.glue:
            return
        lines = self.source.decode("utf-8", "replace").splitlines()
        start, end, group = self.glue[0][0], self.glue[-1][1], self.glue[0][2]
        body = "\n".join(lines[start : end + 1])
        if body.strip():
            self.chunks.append(Chunk(self.path, self.language, "code", start + 1, end + 1, body, "", group,
                                     extra={"group": group}))
        self.glue = []


def _end_row(node) -> int:
    """The last row a node really occupies (preprocessor lines end at column 0 of the next row)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def _start_with_comments(node) -> int:
    """The row where a definition starts, counting the comment block directly above it."""
    row, prev = node.start_point[0], node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] >= row - 1:
        row, prev = prev.start_point[0], prev.prev_sibling
    return row


def _members(body, kind: str) -> list:
    """Direct member definitions of a class body (through templates and decorators)."""
    out = []
    for child in body.named_children:
        inner = next((c for c in child.named_children if c.type == kind), None) if child.type in (
            "template_declaration", "decorated_definition") else child
        if inner is not None and inner.type == kind:
            out.append(inner)
    return out


# ---- C++ -------------------------------------------------------------------------------------

def _cpp_name(declarator) -> str:
    node = declarator
    while node is not None and node.type not in ("function_declarator",):
        node = node.child_by_field_name("declarator")
    if node is None:
        return ""
    inner = node.child_by_field_name("declarator")
    return re.sub(r"<[^<>]*>", "", _text(inner)) if inner is not None else ""


def _fits(node) -> bool:
    return node.end_point[0] - node.start_point[0] + 1 <= MAX_LINES and node.end_byte - node.start_byte <= MAX_CHARS


def _cpp_walk(b: _Builder, node, scope: list[str]) -> None:
    for child in node.named_children:
        _cpp_item(b, child, child, scope)
    b.flush_glue()


def _cpp_item(b: _Builder, outer, node, scope: list[str]) -> None:
    """outer is the node whose range counts (a template_declaration wraps its definition)."""
    t = node.type
    if t == "comment":
        return  # comments travel with the definition below or with the glue around them
    if t == "namespace_definition":
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is not None:
            b.flush_glue()
            _cpp_walk(b, body, scope + ([_text(name)] if name is not None else []))
        return
    if t in ("linkage_specification",) and node.child_by_field_name("body") is not None:
        _cpp_walk(b, node.child_by_field_name("body"), scope)
        return
    if t.startswith("preproc_if") or t in ("preproc_else", "preproc_elif"):
        for child in node.named_children:
            if child.type in ("function_definition", "template_declaration", "namespace_definition",
                              "class_specifier", "struct_specifier", "declaration") or child.type.startswith("preproc_"):
                _cpp_item(b, child, child, scope)
        return
    if t == "template_declaration":
        inner = next((c for c in node.named_children if c.type in
                      ("function_definition", "class_specifier", "struct_specifier", "declaration")), None)
        if inner is not None:
            _cpp_item(b, outer, inner, scope)
            return
    if t == "function_definition":
        name = _cpp_name(node.child_by_field_name("declarator"))
        body = node.child_by_field_name("body")
        sig = _squash(b.source[outer.start_byte : body.start_byte if body is not None else node.end_byte].decode("utf-8", "replace"))
        qual = "::".join(scope + [name]) if name else "::".join(scope)
        b.add(outer, _start_with_comments(outer), "function", qual, sig)
        return
    cls = node if t in _CLASS_TYPES else next((c for c in node.named_children if c.type in _CLASS_TYPES), None)
    if cls is not None and cls.child_by_field_name("body") is not None and t in _CLASS_TYPES | {"declaration", "type_definition"}:
        _cpp_class(b, outer, cls, scope)
        return
    b.add_glue(outer.start_point[0], _end_row(outer), "::".join(scope))


def _cpp_class(b: _Builder, outer, cls, scope: list[str]) -> None:
    name_node = cls.child_by_field_name("name")
    name = re.sub(r"<.*", "", _text(name_node)) if name_node is not None else "(anonymous)"
    body = cls.child_by_field_name("body")
    head = b.source[outer.start_byte : body.start_byte].decode("utf-8", "replace")
    base = _PASS_BASE.search(head)
    kind = "pass" if base else "class"
    passes = [base.group(1)] if base and base.group(1) else []
    qual = "::".join(scope + [name])
    if _fits(outer):
        methods = [_cpp_name(m.child_by_field_name("declarator")).split("::")[-1] for m in _members(body, "function_definition")]
        b.add(outer, _start_with_comments(outer), kind, qual, _squash(head), passes, [m for m in methods if m])
        return
    b.flush_glue()
    b.add_glue(_start_with_comments(outer), body.start_point[0], qual)
    outside, b.enclosing = b.enclosing, f"in {_squash(head)}"
    for member in body.named_children:
        _cpp_item(b, member, member, scope + [name])
    b.flush_glue()
    b.enclosing = outside
    b.add_glue(body.end_point[0], outer.end_point[0], qual)
    b.flush_glue()


def chunk_cpp(path: str, source: bytes) -> list[Chunk]:
    root = parser("cpp").parse(source).root_node
    _check(root, len(source))
    b = _Builder(path, "cpp", source)
    _cpp_walk(b, root, [])
    return b.chunks


# ---- Python ----------------------------------------------------------------------------------

def _py_walk(b: _Builder, block, scope: list[str]) -> None:
    for child in block.named_children:
        node = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if node is not None and node.type in ("function_definition", "class_definition"):
            name = _text(node.child_by_field_name("name"))
            body = node.child_by_field_name("body")
            head = re.sub(r"#[^\n]*", "", b.source[node.start_byte : body.start_byte].decode("utf-8", "replace"))
            sig = _squash(head.rstrip().rstrip(":"))
            qual = ".".join(scope + [name])
            if node.type == "class_definition" and not _fits(child):
                b.flush_glue()
                b.add_glue(_start_with_comments(child), body.start_point[0], qual)
                outside, b.enclosing = b.enclosing, f"in {sig}"
                _py_walk(b, body, scope + [name])
                b.enclosing = outside
                continue
            kind = "class" if node.type == "class_definition" else "function"
            methods = [_text(m.child_by_field_name("name")) for m in _members(body, "function_definition")]
            b.add(child, _start_with_comments(child), kind, qual, sig, members=methods if kind == "class" else ())
        elif child.type != "comment":
            b.add_glue(child.start_point[0], _end_row(child), ".".join(scope))
    b.flush_glue()


def chunk_python(path: str, source: bytes) -> list[Chunk]:
    root = parser("python").parse(source).root_node
    if root.has_error:
        _check(root, len(source))
    b = _Builder(path, "python", source)
    _py_walk(b, root, [])
    return b.chunks


# ---- TableGen --------------------------------------------------------------------------------

_TD_RECORD = re.compile(r"^\s*(def|class|multiclass|defm|let|foreach)\s+([A-Za-z0-9_]*)")


def chunk_tablegen(path: str, source: bytes) -> list[Chunk]:
    root = parser("tablegen").parse(source).root_node
    _check(root, len(source))
    b = _Builder(path, "tablegen", source)
    for child in root.named_children:
        match = _TD_RECORD.match(_text(child))
        if child.type == "statement" and match and match.group(1) != "let":
            keyword, name = match.groups()
            head = _text(child).split("{", 1)[0]
            b.add(child, _start_with_comments(child), "td_record", name, _squash(f"{head}"))
        elif child.type == "statement" and match:
            b.add(child, _start_with_comments(child), "td_record", "let", _squash(_text(child).split("{", 1)[0]))
        elif child.type != "comment":
            b.add_glue(child.start_point[0], _end_row(child), "")
    b.flush_glue()
    return b.chunks
