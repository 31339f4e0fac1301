"""A light symbol graph over one corpus's chunks (issue 19 item 4): which chunk leads to which.

Questions often name a pass by its flag or TableGen record, or the pass that adds a rewrite, while the answer is
the code that does the work. The edges come from what the chunks already say, no compiler needed:
- `implements`: a TableGen pass def (`def TritonGPUCoalesce : Pass<"tritongpu-coalesce", ...>`) -> the C++ that
  implements it (the class deriving `impl::TritonGPUCoalesceBase`, or `GEN_PASS_DEF_TRITONGPUCOALESCE` where none
  does; that class's `runOnOperation`; a hand-written `createTritonGPUCoalesce[Pass]`);
- `binds`: a Python call of a pass's binding (`passes.ttgpuir.add_coalesce(pm)`) -> that implementation (the
  binding is found by the pass's flag, `tritongpu-coalesce`, as enrichment does: the C++ bindings are not chunked);
- `adds`: a chunk registering rewrite patterns (`patterns.add<BlockedToMMA, ...>`) -> the patterns' definitions;
- `calls`: a chunk -> the definitions of the names it uses that exactly one file defines (caller -> callee).
Each edge is stored on its source chunk's payload as `links` ([kind, path, start_line]), so a hit carries them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict

from kopt.ingest.chunk import Chunk
from kopt.ingest.enrich import _TD_PASS, Registry

GRAPH_VERSION = 1  # bump when the edges change: the catalog records it, so an index built before is rebuilt
MAX_LINKS = 16  # per chunk; a pipeline builder that adds 40 passes leads nowhere in particular
MAX_TARGETS = 4  # chunks per linked name (a class split into parts)
_IMPL_BASE = re.compile(r"\bimpl::(\w+)Base\b")
_GEN_PASS_DEF = re.compile(r"\bGEN_PASS_DEF_([A-Z0-9_]+)")
_PASS_CLASS = re.compile(r"\b(?:struct|class)\s+(\w+)\s*(?:final\s*)?:[^{;]*\bimpl::(\w+)Base\b")
_PY_ADD = re.compile(r"\.(add_\w+)\s*\(")
_ADDS = re.compile(r"\.(?:add|insert)\s*<([^;{}()]+?)>\s*\(")
_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{5,})\s*[(<]")
_CODE_KINDS = {"function", "class", "pass", "code"}
_DEF_KINDS = {"function", "class", "pass"}


def chunk_key(chunk: Chunk) -> tuple[str, int]:
    return chunk.path, chunk.start_line


def build_graph(chunks: list[Chunk]) -> dict[tuple[str, int], list[list]]:
    """Per chunk (path, start_line): its outgoing edges [kind, path, start_line], at most MAX_LINKS, kinds in order."""
    defs: dict[str, list[Chunk]] = defaultdict(list)
    for c in chunks:
        if c.kind in _DEF_KINDS and c.language in ("cpp", "python"):
            for name in dict.fromkeys(c.symbols + _class_names(c)):
                defs[name].append(c)
    impls = _implementations(chunks, defs)
    edges: dict[tuple[str, int], list[list]] = defaultdict(list)

    def link(src: Chunk, kind: str, targets: list[Chunk]) -> None:
        have = {(p, s) for _, p, s in edges[chunk_key(src)]}
        for t in targets:
            if chunk_key(t) != chunk_key(src) and chunk_key(t) not in have:
                edges[chunk_key(src)].append([kind, t.path, t.start_line])
                have.add(chunk_key(t))

    reg = Registry()
    for c in chunks:
        if c.kind == "td_record":
            reg.learn(c.body)
    for c in chunks:
        if c.kind == "td_record":
            for record, _flag in _TD_PASS.findall(c.body):
                link(c, "implements", impls.get(record, []))
        if c.kind not in _CODE_KINDS:
            continue
        if c.language == "python":
            for binding in dict.fromkeys(_PY_ADD.findall(c.body)):
                link(c, "binds", impls.get(reg.pass_by_binding(binding)[0], []))
        for group in _ADDS.findall(c.body):
            for name in re.findall(r"\w+", re.sub(r"<[^<>]*>", "", group)):
                link(c, "adds", _unique(defs.get(name, [])))
        own = set(c.symbols)
        for name in dict.fromkeys(_NAME.findall(c.body)):
            if name not in own:
                link(c, "calls", _unique(defs.get(name, [])))
    return {key: links[:MAX_LINKS] for key, links in edges.items() if links}


def digest(graph: dict) -> str:
    """What the catalog records: a re-ingest whose edges differ is a new build."""
    rows = sorted([list(key), links] for key, links in graph.items())
    return hashlib.sha256(json.dumps([GRAPH_VERSION, rows]).encode()).hexdigest()[:12]


def _class_names(c: Chunk) -> list[str]:
    """A whole class chunk defines its class (symbol); a member cut from a split class is part of it too."""
    quals = [q.strip().split(" (part")[0] for q in c.qualname.split(",") if q.strip()]
    return [q.replace(".", "::").split("::")[-2] for q in quals if "::" in q.replace(".", "::")]


def _unique(found: list[Chunk]) -> list[Chunk]:
    """The definitions of a name that one file holds (a name defined in two files is too common to lead anywhere)."""
    return found[:MAX_TARGETS] if found and len({c.path for c in found}) == 1 else []


def _implementations(chunks: list[Chunk], defs: dict[str, list[Chunk]]) -> dict[str, list[Chunk]]:
    """TableGen pass record -> the chunks that implement it (its pass class head, runOnOperation, create function)."""
    out: dict[str, list[Chunk]] = defaultdict(list)
    fallback: dict[str, list[Chunk]] = defaultdict(list)
    classes: dict[str, str] = {}
    for c in chunks:
        if c.language != "cpp" or c.kind not in _CODE_KINDS:
            continue
        classes.update(_PASS_CLASS.findall(c.body))
        for record in _IMPL_BASE.findall(c.body):
            if c not in out[record]:
                out[record].append(c)
        for upper in _GEN_PASS_DEF.findall(c.body):
            fallback[upper].append(c)
    for cls, record in classes.items():
        out[record] += [c for c in defs.get("runOnOperation", []) if _class_names(c)[-1:] == [cls]]
    for record in {r for c in chunks if c.kind == "td_record" for r, _ in _TD_PASS.findall(c.body)} - set(out):
        out[record] = fallback.get(record.upper(), [])  # no impl::Base: the file that defines the pass
    for name, found in defs.items():
        m = re.fullmatch(r"create(\w+?)(?:Pass)?", name)
        if m and m.group(1) in out:
            out[m.group(1)] += [c for c in found if c not in out[m.group(1)]]
    return out

