"""ingest_corpus: sources -> chunks -> enrichment -> vectors -> a new collection -> alias swap.

A git corpus also gets a side collection of its files' commit subjects (ingest/history.py), swapped with it.
Each chunk's payload carries its symbol-graph edges (`links`, ingest/symbol_graph.py), and the catalog entry the
graph's version and digest, so a graph built by other code makes another build.
Document expansion (ingest/expansion.py; triton and triton-ascend by default, with the committed pairs): the
questions known to point at a chunk join the text its BM25 vector is built from, their mean MiniLM vector is the chunk's
second dense vector (`questions`: the model was trained on question-question similarity, not on code), and the catalog
entry records which pairs (files, digest), so other pairs make another build.

Every ingest builds into a staging collection recorded in the catalog under `building`; only
when it is complete, sealed (flushed and closed: never written again) and verified through a reader's view
does the catalog point the corpus at it (one atomic write) and retire the old one (index/backends.py: readers
that hold it keep it until they close); when nothing changed, nothing is rewritten. Point ids come from (corpus, path, start line, content), so an interrupted ingest resumes
into the same staging collection, skips what is already there, and never duplicates.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from kopt.errors import KoptError
from kopt.index.backends import DENSE, QUESTIONS, entry_collections, open_backend
from kopt.index.embed import VectorCache, dimension, embed_text, encode, text_hash
from kopt.index.tokenize import doc_vector, tokens
from kopt.ingest import code_chunks, text_chunks
from kopt.ingest.chunk import Chunk, fit, windows
from kopt.ingest.enrich import Registry, diagnostics_in, env_knobs_in, ops_in, passes_in
from kopt.ingest.expansion import EXPANDED_CORPORA, EXPANSION_WEIGHT, committed_pairs, load_expansion, miner_files
from kopt.ingest.history import file_histories
from kopt.ingest.manifest import LANGUAGES, MAX_BYTES, load_manifest, resolve
from kopt.ingest.symbol_graph import GRAPH_VERSION, build_graph, chunk_key
from kopt.ingest.symbol_graph import digest as graph_digest

ID_NAMESPACE = uuid.UUID("6f1c2b8e-4d0a-4c55-9a51-6b6f70742d31")
BATCH = 128
PIPELINE = 6  # bump when chunking, enrichment or the vectors stored change: same content then still gets rebuilt


@dataclass
class IngestSummary:
    corpus: str
    version: str
    collection: str
    files: int
    chunks: int
    new: int          # chunks the previously served version did not have
    reused: int       # chunks carried over unchanged
    deleted: int      # chunks of the previous version that are gone
    embedded: int     # vectors computed now (the rest came from the vector cache)
    fallbacks: int    # files chunked by line windows because they did not parse
    skipped: int      # binary, huge or unknown-suffix files
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def chunk_file(rel: str, data: bytes, kind_hint: str | None = None) -> tuple[list[Chunk], bool]:
    """Chunks of one file and whether it fell back to line windows."""
    language = LANGUAGES[Path(rel).suffix.lower()]
    text = data.decode("utf-8", "replace")
    try:
        if language == "cpp":
            chunks = code_chunks.chunk_cpp(rel, data)
        elif language == "python":
            chunks = code_chunks.chunk_python(rel, data)
        elif language == "tablegen":
            chunks = code_chunks.chunk_tablegen(rel, data)
        elif language == "mlir":
            chunks = text_chunks.chunk_mlir(rel, text)
        elif language == "yaml":
            chunks = text_chunks.chunk_patterns(rel, text)
        else:
            chunks = text_chunks.chunk_document(rel, text, language, kind_hint or "doc")
    except (code_chunks.ParseFailure, ValueError, RecursionError):
        return windows(text, rel, language), True
    return fit(chunks, text), False


def point_id(corpus: str, chunk: Chunk, expansion: str = "") -> str:
    """Stable per content; an expanded chunk's id also carries its expansion, so other pairs make other points."""
    key = f"{corpus}|{chunk.path}|{chunk.start_line}|{chunk.content_hash}"
    return str(uuid.uuid5(ID_NAMESPACE, key + (f"|{text_hash(expansion)}" if expansion else "")))


def default_expansion(name: str) -> list[Path]:
    """The pairs a corpus is expanded with when `--expand` is not given: the committed ones, where present."""
    return miner_files(committed_pairs()) if name in EXPANDED_CORPORA else []


def payload(chunk: Chunk, corpus: str, version: str, reg: Registry, links: list | None = None) -> dict:
    body = chunk.body
    return {
        "corpus": corpus, "version": version, "path": chunk.path, "language": chunk.language, "kind": chunk.kind,
        "symbol": chunk.symbol, "symbols": chunk.symbols, "qualname": chunk.qualname, "signature": chunk.signature,
        "start_line": chunk.start_line, "end_line": chunk.end_line,
        "passes": list(dict.fromkeys(chunk.passes + passes_in(body, reg))), "ops": ops_in(body, reg),
        "diagnostics": diagnostics_in(body), "env_knobs": env_knobs_in(body), "content_hash": chunk.content_hash,
        "text": chunk.text, **{k: v for k, v in chunk.extra.items() if k != "group"}, **({"links": links} if links else {}),
    }


def ingest_corpus(name: str, settings, *, path: Path | None = None, rev: str | None = None,
                  embed_model: str | None = None, progress: bool = True,
                  expand: list[Path] | None = None) -> IngestSummary:
    """Ingest one corpus into the index of `settings`; returns what changed.

    `expand`: pair files or folders whose queries expand the chunks' BM25 text (None: `default_expansion`; []: none).
    """
    started = time.perf_counter()
    paths = default_expansion(name) if expand is None else expand
    expansion = load_expansion(paths) if paths else None
    source = resolve(load_manifest(name), Path(path) if path else None, rev)
    model = embed_model or settings.embed_model
    kind_hint = "pass_note" if name == "passes" else None

    chunks, fallbacks, skipped, reg = [], 0, 0, Registry()
    blobs: dict[str, bytes] = {}
    for rel in source.files:
        if Path(rel).suffix.lower() not in LANGUAGES or source.size(rel) > MAX_BYTES:
            skipped += 1
            continue
        data = source.read(rel)
        if b"\0" in data[:8192]:
            skipped += 1
            continue
        blobs[rel] = data
        if rel.endswith(".td"):
            reg.learn(data.decode("utf-8", "replace"))
    for rel, data in blobs.items():
        file_chunks, fell_back = chunk_file(rel, data, kind_hint)
        fallbacks += fell_back
        chunks.extend(file_chunks)
    del blobs
    if not chunks:
        raise KoptError(f"corpus {name}: no chunks from {source.root} ({len(source.files)} files selected, {skipped} skipped)")

    records, expansions = {}, {}
    for c in chunks:
        extra = expansion.text_for(name, c.path, c.start_line, c.end_line) if expansion else ""
        pid = point_id(name, c, extra)
        records[pid], expansions[pid] = c, extra
    avgdl = sum(len(tokens(c.text)) + EXPANSION_WEIGHT * len(tokens(expansions[pid]))
                for pid, c in records.items()) / len(records)
    described = expansion.describe(sum(1 for extra in expansions.values() if extra)) if expansion else None
    graph = build_graph(chunks)
    links = {pid: graph.get(chunk_key(c), []) for pid, c in records.items()}
    graph_entry = {"version": GRAPH_VERSION, "digest": graph_digest(graph), "links": sum(map(len, graph.values()))}

    backend, cache = open_backend(settings), VectorCache()
    try:
        with backend.writer_lock(f"ingest of {name}"):
            summary = _build(backend, cache, name, source, model, records, expansions, avgdl, reg, described,
                             links, graph_entry, progress)
    finally:
        backend.close()
        cache.close()
    return IngestSummary(name, source.version, summary["collection"], len(source.files) - skipped, len(records),
                         summary["new"], summary["reused"], summary["deleted"], summary["embedded"], fallbacks, skipped,
                         round(time.perf_counter() - started, 2))


def building_state(entry: dict) -> str:
    """How an unfinished build in the catalog stands: its ingest is alive on this host, or it was interrupted."""
    owner = entry.get("owner") or {}
    if owner.get("host") and owner["host"] != socket.gethostname():
        return f"ingest on {owner['host']} (pid {owner['pid']}): in progress there, or interrupted"
    if owner.get("pid") and _alive(owner["pid"]):
        return f"ingest in progress (pid {owner['pid']})"
    return "interrupted ingest"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _same_build(entry: dict | None, source, model: str, expansion: dict | None, graph: dict) -> bool:
    return bool(entry and entry["version"] == source.version and entry["model"] == model
                and entry.get("pipeline") == PIPELINE and entry.get("expansion") == expansion
                and entry.get("graph") == graph)


def _build(backend, cache, name, source, model, records, expansions, avgdl, reg, expansion, links, graph,
           progress) -> dict:
    catalog = backend.read_catalog()
    served = catalog["corpora"].get(name)
    old_ids = ({pid for pid, _ in backend.scroll(served["collection"], payload=False)}
               if served and served["collection"] in backend.names() else set())
    if _same_build(served, source, model, expansion, graph) and old_ids == records.keys():
        return {"collection": served["collection"], "new": 0, "reused": len(records), "deleted": 0, "embedded": 0}
    staging = catalog["building"].get(name)
    if not (_same_build(staging, source, model, expansion, graph) and staging["collection"] in backend.names()):
        if staging and staging["collection"] in backend.names():
            backend.drop(staging["collection"])  # an unfinished build of another version or model: start over
            backend.drop(f"{staging['collection']}-history")
        staging = {"collection": _next_collection(backend, name, source.version), "version": source.version,
                   "model": model, "dim": dimension(model), "pipeline": PIPELINE, "graph": graph,
                   **({"expansion": expansion} if expansion else {})}
        backend.create(staging["collection"], staging["dim"])
    backend.open_writable(staging["collection"])
    staging = {k: v for k, v in staging.items() if k != "owner"}
    catalog["building"][name] = {**staging, "owner": {"pid": os.getpid(), "host": socket.gethostname()}}
    backend.write_catalog(catalog)  # so `kopt index list` can tell this live build from an interrupted one
    coll = staging["collection"]

    present = {pid for pid, _ in backend.scroll(coll, payload=False)}
    backend.delete(coll, sorted(present - records.keys()))  # left over by an earlier, different attempt
    todo = [pid for pid in records if pid not in present]

    chunk_texts = {pid: embed_text(records[pid].header, records[pid].body) for pid in todo}
    hashes = {pid: text_hash(t) for pid, t in chunk_texts.items()}
    asked = {pid: expansions[pid].split("\n") for pid in todo if expansions[pid]}  # one question per line
    texts = {**{hashes[pid]: t for pid, t in chunk_texts.items()},
             **{text_hash(q): q for questions in asked.values() for q in questions}}
    cached = cache.get_many(model, sorted(texts))
    missing = sorted((h for h in texts if h not in cached), key=lambda h: (len(texts[h]), h))  # batches of like length pad little
    embedded = 0
    with _progress(progress, f"ingest {name}@{source.version}", len(missing) + len(todo)) as bar:
        for i in range(0, len(missing), BATCH):
            part = missing[i : i + BATCH]
            fresh = dict(zip(part, encode(model, [texts[h] for h in part])))
            cache.put_many(model, fresh)
            cached.update(fresh)
            embedded += len(part)
            bar(len(part), "embedding")
        for i in range(0, len(todo), BATCH * 4):
            part = todo[i : i + BATCH * 4]
            backend.upsert(coll, [(pid, _vectors(cached, hashes[pid], asked.get(pid)),
                                   doc_vector(records[pid].text, avgdl, expansions[pid], EXPANSION_WEIGHT),
                                   payload(records[pid], name, source.version, reg, links[pid])) for pid in part])
            bar(len(part), "storing")
    backend.flush(coll)
    history = (_build_history(backend, coll, name, source, staging["dim"])
               if source.manifest.source == "git" and not source.exported else None)
    _publish(backend, name, {**staging, "points": len(records), "root": str(source.root), "avgdl": avgdl,
                             **({"questions": expansion["chunks"]} if expansion and expansion["chunks"] else {}),
                             "ingested": time.strftime("%Y-%m-%dT%H:%M:%S"), **({"history": history} if history else {})},
             served)
    new = len(records.keys() - old_ids) if old_ids else len(records)
    return {"collection": coll, "new": new, "reused": len(records) - new, "deleted": len(old_ids - records.keys()),
            "embedded": embedded}


def _vectors(cached: dict, chunk_hash: str, questions: list[str] | None) -> dict[str, list[float]]:
    """A point's dense vectors: the chunk's own, and the normalised mean of its questions' where it has some."""
    vectors = {DENSE: cached[chunk_hash].tolist()}
    if questions:
        mean = np.mean([cached[text_hash(q)] for q in questions], axis=0)
        vectors[QUESTIONS] = (mean / (np.linalg.norm(mean) or 1.0)).tolist()
    return vectors


def _publish(backend, name: str, entry: dict, served: dict | None) -> None:
    """Seal the new version, check it as a reader will see it, switch the catalog to it, retire the old one."""
    for coll in entry_collections(entry):
        backend.seal(coll)
    stored = backend.count(entry["collection"])
    if stored != entry["points"]:
        raise KoptError(f"ingest of {name} incomplete: {stored} of {entry['points']} points stored; run it again")
    catalog = backend.read_catalog()
    catalog["corpora"][name] = entry
    catalog["building"].pop(name, None)
    backend.write_catalog(catalog)  # the swap: readers that open the index from now on see the new version
    if served:
        backend.retire([c for c in entry_collections(served) if c not in entry_collections(entry)])


@contextmanager
def revised(backend, name: str):
    """A new version of served corpus `name` to edit: a copy of the current one, published when the block ends.

    The served version is shared with readers' views, so it is never written in place (kopt synthesize uses this
    to add its patterns). Yields the new collection's name.
    """
    with backend.writer_lock(f"update of {name}"):
        served = backend.read_catalog()["corpora"][name]
        points = backend.scroll(served["collection"], vectors=True)
        coll = _next_collection(backend, name, served["version"])
        backend.create(coll, served.get("dim") or len(points[0][1]))
        for i in range(0, len(points), BATCH * 4):
            backend.upsert(coll, points[i : i + BATCH * 4])
        yield coll
        backend.flush(coll)
        _publish(backend, name, {**served, "collection": coll, "points": backend.count(coll)}, served)


def _next_collection(backend, name: str, version: str) -> str:
    generation = max([int(c.rsplit("-g", 1)[1]) for c in backend.names() if c.startswith(f"{name}-")
                      and c.rsplit("-g", 1)[-1].isdigit()] + [0]) + 1
    return f"{name}-{_safe(version)}-g{generation}"


def _build_history(backend, coll: str, name: str, source, dim: int) -> str | None:
    """A side collection `<coll>-history`: one BM25 point per file, its commit subjects (ingest/history.py).

    Rebuilt whole on every build (a second); its dense vector is a placeholder, since only BM25 reads it.
    """
    texts = file_histories(source.root, source.rev or "HEAD", source.files)
    if not texts:
        return None
    history = f"{coll}-history"
    backend.drop(history)
    backend.create(history, dim)
    avgdl = sum(len(tokens(t)) for t in texts.values()) / len(texts)
    placeholder = {DENSE: [1.0] + [0.0] * (dim - 1)}
    points = [(str(uuid.uuid5(ID_NAMESPACE, f"{name}|history|{path}")), placeholder, doc_vector(text, avgdl),
               {"corpus": name, "path": path, "kind": "history"}) for path, text in texts.items()]  # no text: cheap to return
    for i in range(0, len(points), BATCH * 4):
        backend.upsert(history, points[i : i + BATCH * 4])
    backend.flush(history)
    return history


def _safe(version: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._" else "_" for ch in version)


class _progress:
    """A rich progress bar (or nothing); call the handle with (advance, description)."""

    def __init__(self, enabled: bool, title: str, total: int):
        self.enabled, self.title, self.total = enabled and total > 0, title, total

    def __enter__(self):
        if not self.enabled:
            return lambda n, what: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                            transient=True)
        self.bar.start()
        task = self.bar.add_task(self.title, total=self.total)
        return lambda n, what: self.bar.update(task, advance=n, description=f"{self.title}: {what}")

    def __exit__(self, *exc):
        if self.enabled:
            self.bar.stop()
