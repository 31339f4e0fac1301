"""Two storage backends behind one small interface: Qdrant Edge on disk, or a Qdrant server.

Each collection holds one corpus at one version, with a dense vector `dense`, a BM25 sparse vector `bm25` (IDF
modifier) and, for a chunk that document expansion gives questions, a second dense vector `questions` (their mean).
Which collection serves a corpus is kept in a catalog: a JSON file replaced atomically (Edge), or a `kopt_catalog`
collection plus real Qdrant aliases (server).
Filters are plain dicts: {key: value | [values]} means "matches (any of)"; {key: NONEMPTY} means
"the list field has at least one element".

Many readers, one writer (Edge): a served collection is immutable once published; every reader opens it through
a hard-linked copy that it alone holds (a "view", no data copied), because Qdrant Edge opens a shard only once
at a time (index/README.md says what was measured). Deleting a retired version then only unlinks names:
readers that hold a view keep its files alive until they close.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import shutil
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

from kopt.errors import IndexError_

DENSE, SPARSE, QUESTIONS = "dense", "bm25", "questions"
NONEMPTY = object()
KEYWORD_FIELDS = ("corpus", "path", "language", "kind", "symbols", "passes", "qualname",
                  "diagnostics")  # indexed, a "has diagnostics" filter takes 0.2 ms, not 10 (Triton, 5689 chunks)
# (id, dense vectors by name: DENSE always, QUESTIONS where the chunk has questions, (BM25 indices, values), payload)
Point = tuple[str, dict[str, list[float]], tuple[list[int], list[float]], dict]


def entry_collections(entry: dict) -> list[str]:
    """The collections a catalog entry owns: its chunks, and the side collection of its files' commit subjects."""
    return [c for c in (entry["collection"], entry.get("history")) if c]


class EdgeBackend:
    """Qdrant Edge shards under <index_path>/collections/<name>, catalog in <index_path>/catalog.json.

    A collection this backend creates (or resumes) is opened in place for writing; any other is read through a
    view: a slot <index_path>/readers/<collection>/<n>/ held with an exclusive flock on <n>.lock while open.
    Slots outlive their readers and are reused (linking is cheap, unlinking ~1 ms a file on a busy disk); a
    killed reader's flock goes with it. Retiring a collection removes its free slots.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self._shards: dict[str, object] = {}
        self._writable: set[str] = set()
        self._slots: dict[str, tuple[Path, object]] = {}  # collection -> (its view, the held slot lock)

    # -- catalog --------------------------------------------------------------------------
    def read_catalog(self) -> dict:
        path = self.root / "catalog.json"
        if not path.exists():
            return {"corpora": {}, "building": {}}
        try:
            return json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise IndexError_(f"{path}: unreadable index catalog ({exc})", hint="run `kopt index doctor`") from exc

    def write_catalog(self, catalog: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".catalog.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(catalog, indent=1, sort_keys=True))
        os.replace(tmp, self.root / "catalog.json")  # atomic: readers see the old or the new catalog

    def pin(self) -> dict:
        """The catalog, with a view of every collection it serves taken now: this reader keeps that version.

        Runs under a shared lock that `retire` takes exclusively, so no served collection is deleted mid-copy.
        A collection missing on disk is left unpinned (using it raises "missing"; `kopt index doctor` reports it).
        """
        with self._versions_lock(fcntl.LOCK_SH):
            catalog = self.read_catalog()
            for entry in catalog.get("corpora", {}).values():
                for name in entry_collections(entry):
                    if (self.root / "collections" / name).is_dir():
                        self._view(name)
        return catalog

    def retire(self, names: list[str]) -> None:
        """Delete collections no longer served, and the free views of every collection that is gone.

        Under the exclusive lock the collections are only renamed into trash/ (no pin is linking them then);
        deleting files is slow, so it happens after readers may pin again. A reader still holding a view of a
        retired collection removes it when it closes.
        """
        trash = self.root / "trash"
        trash.mkdir(parents=True, exist_ok=True)
        with self._versions_lock(fcntl.LOCK_EX):
            for name in names:
                if (self.root / "collections" / name).is_dir():
                    os.rename(self.root / "collections" / name, trash / f"{name}.{uuid.uuid4().hex[:8]}")
        for path in trash.iterdir():  # with any left by a writer killed while deleting
            shutil.rmtree(path, ignore_errors=True)
        readers = self.root / "readers"
        for base in readers.iterdir() if readers.is_dir() else []:
            if not (self.root / "collections" / base.name).is_dir():
                _remove_free_slots(base)

    @contextmanager
    def _versions_lock(self, mode: int):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".versions.lock", "a") as fh:
            fcntl.flock(fh, mode)  # held for milliseconds: a pin's hard links, a retire's renames
            yield

    @contextmanager
    def writer_lock(self, what: str = "write to the index"):
        """One writer at a time per index (ingest, drop, doctor --fix, pattern upserts); a second fails fast.

        `what` ("ingest of triton") goes into the lock file with the pid, for the message the second one gets.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".write.lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise IndexError_(f"{self.root}: {self._holder(fh)}", hint="wait for it to finish, or stop it") from exc
            fh.truncate(0)
            fh.write(f"{os.getpid()} {what}")
            fh.flush()
            try:
                yield
            finally:
                fh.truncate(0)

    def writer(self) -> str | None:
        """Who holds the writer lock now ("another ingest of triton is running (pid N)"), or None."""
        path = self.root / ".write.lock"
        if not path.exists():
            return None
        with open(path) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return self._holder(fh)
        return None

    @staticmethod
    def _holder(fh) -> str:
        fh.seek(0)
        pid, _, what = fh.read().partition(" ")
        return f"another {what or 'write to the index'} is running (pid {pid or '?'})"

    # -- collections ----------------------------------------------------------------------
    def names(self) -> list[str]:
        base = self.root / "collections"
        return sorted(p.name for p in base.iterdir()) if base.is_dir() else []

    def create(self, name: str, dim: int) -> None:
        from qdrant_edge import (
            Distance,
            EdgeConfig,
            EdgeShard,
            EdgeSparseVectorParams,
            EdgeVectorParams,
            Modifier,
            PayloadSchemaType,
            UpdateOperation,
        )

        path = self.root / "collections" / name
        shutil.rmtree(path, ignore_errors=True)
        shard = EdgeShard.create(str(path), EdgeConfig(
            vectors={key: EdgeVectorParams(size=dim, distance=Distance.Cosine) for key in (DENSE, QUESTIONS)},
            sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)}))
        for key in KEYWORD_FIELDS:
            shard.update(UpdateOperation.create_field_index(key, PayloadSchemaType.Keyword))
        self._shards[name] = shard
        self._writable.add(name)

    def open_writable(self, name: str) -> None:
        """Open an unpublished collection in place to go on writing it (an interrupted build)."""
        if name not in self._writable:
            self._shards[name] = self._load(self.root / "collections" / name, name)
            self._writable.add(name)

    def seal(self, name: str) -> None:
        """Flush and close a collection written here: from now on its files never change, and readers may link them."""
        if name in self._writable:
            shard = self._shards.pop(name)
            shard.flush()
            shard.close()
            self._writable.discard(name)

    def _shard(self, name: str):
        if name not in self._shards:
            if name not in self._slots:
                with self._versions_lock(fcntl.LOCK_SH):
                    self._view(name)
            self._shards[name] = self._load(self._slots[name][0], name)
        return self._shards[name]

    def _view(self, name: str) -> None:
        """Take a free slot of `name` and make it a view of the collection (its own WAL lock, no data copied)."""
        if name in self._slots:
            return
        src = self.root / "collections" / name
        if not src.is_dir():
            raise IndexError_(f"index collection {name} is missing under {self.root}", hint="re-run `kopt ingest`")
        base = self.root / "readers" / name
        base.mkdir(parents=True, exist_ok=True)
        for slot in itertools.count():
            lock = open(base / f"{slot}.lock", "a")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                lock.close()
        view = base / str(slot)
        try:
            if not _is_view_of(view, src):
                shutil.rmtree(view, ignore_errors=True)  # none yet, or of an earlier collection of the same name
                tmp = base / f".{slot}.tmp"
                shutil.rmtree(tmp, ignore_errors=True)  # left by a reader killed while linking
                shutil.copytree(src, tmp, copy_function=os.link)
                os.rename(tmp, view)
        except (OSError, shutil.Error) as exc:
            lock.close()
            raise IndexError_(f"{src}: cannot open index collection ({exc})", hint="run `kopt index doctor`") from exc
        self._slots[name] = (view, lock)

    @staticmethod
    def _load(path: Path, name: str):
        from qdrant_edge import EdgeShard

        if not path.is_dir():
            raise IndexError_(f"index collection {name} is missing under {path.parent}", hint="re-run `kopt ingest`")
        try:
            return EdgeShard.load(str(path))
        except Exception as exc:  # the engine reports corruption and locks as plain exceptions
            if "WouldBlock" in str(exc):  # another process holds the shard's WAL lock
                raise IndexError_(f"{path}: being written by another kopt process",
                                  hint="try again when it has finished") from exc
            raise IndexError_(f"{path}: cannot open index collection ({exc})", hint="run `kopt index doctor`") from exc

    def drop(self, name: str) -> None:
        shard = self._shards.pop(name, None)
        if shard is not None:
            shard.close()
        self._writable.discard(name)
        shutil.rmtree(self.root / "collections" / name, ignore_errors=True)

    def upsert(self, name: str, points: list[Point]) -> None:
        from qdrant_edge import Point as EdgePoint
        from qdrant_edge import SparseVector, UpdateOperation

        self._writable_shard(name).update(UpdateOperation.upsert_points([
            EdgePoint(pid, {**_lists(vecs), SPARSE: SparseVector(indices=sp[0], values=sp[1])}, payload)
            for pid, vecs, sp, payload in points]))

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_edge import UpdateOperation

        if ids:
            self._writable_shard(name).update(UpdateOperation.delete_points(list(ids)))

    def flush(self, name: str) -> None:
        self._writable_shard(name).flush()

    def _writable_shard(self, name: str):
        if name not in self._writable:  # a published collection is shared with readers' views: never write it
            raise IndexError_(f"index collection {name} is not open for writing (a bug in kopt)")
        return self._shards[name]

    def count(self, name: str) -> int:
        from qdrant_edge import CountRequest

        return self._shard(name).count(CountRequest(exact=True))

    def scroll(self, name: str, flt: dict | None = None, limit: int | None = None, payload: bool = True,
               vectors: bool = False, text: bool = True) -> list[tuple]:
        """(id, payload) pairs; with vectors, Points ready to upsert. Without `text`, payloads leave the chunk's text out."""
        from qdrant_edge import PayloadSelector, ScrollRequest

        selector = payload if text or not payload else PayloadSelector.Exclude(["text"])
        out, offset = [], None
        while True:
            page, offset = self._shard(name).scroll(ScrollRequest(offset=offset, limit=1024, filter=_edge_filter(flt),
                                                                   with_payload=selector, with_vector=vectors))
            out += [_point(r) if vectors else (str(r.id), r.payload or {}) for r in page]
            if offset is None or (limit and len(out) >= limit):
                return out[:limit] if limit else out

    def query(self, name: str, searches: dict, limit: int, flt: dict | None, payload: bool = True) -> dict[str, list]:
        """Nearest neighbours per named vector ({DENSE: vector, SPARSE: (indices, values), ...}, in one batch): lists
        of (id, score, payload); without `payload`, empty payloads (converting ~100 payloads costs several times the
        search: Index caches them instead)."""
        from qdrant_edge import Query, QueryBatchRequest, QueryRequest, SparseVector

        order = list(searches)
        requests = [QueryRequest(limit=limit, filter=_edge_filter(flt), with_payload=payload, query=Query.Nearest(
            SparseVector(indices=q[0], values=q[1]) if key == SPARSE else list(q), using=key))
            for key, q in searches.items()]
        results = self._shard(name).query_batch(QueryBatchRequest(requests)) if requests else []
        return {k: [(str(p.id), p.score, p.payload or {}) for p in r] for k, r in zip(order, results)}

    def retrieve(self, name: str, ids: list[str], text: bool) -> dict[str, dict]:
        """Payloads by point id: with `text`, the chunk text alone; without, everything else."""
        from qdrant_edge import PayloadSelector

        selector = PayloadSelector.Include(["text"]) if text else PayloadSelector.Exclude(["text"])
        return {str(r.id): r.payload or {} for r in self._shard(name).retrieve(list(ids), with_payload=selector, with_vector=False)}

    def close(self) -> None:
        for shard in self._shards.values():
            shard.close()
        self._shards.clear()
        self._writable.clear()
        for name, (view, lock) in self._slots.items():
            lock.close()
            if not (self.root / "collections" / name).is_dir():  # retired while this reader held it
                _remove_free_slots(view.parent)
        self._slots.clear()


def _lists(vectors: dict) -> dict[str, list[float]]:
    return {key: list(vec) for key, vec in vectors.items()}


def _point(record) -> tuple:
    """A scrolled record (with its vectors) as a Point."""
    sparse = record.vector[SPARSE]
    return (str(record.id), _lists({k: v for k, v in record.vector.items() if k != SPARSE}),
            (list(sparse.indices), list(sparse.values)), record.payload or {})


def _is_view_of(view: Path, src: Path) -> bool:
    """Whether a slot holds a whole view of this very collection (segment folders are named by random uuids)."""
    try:
        return set(os.listdir(view / "segments")) == set(os.listdir(src / "segments"))
    except OSError:
        return False


def _remove_free_slots(base: Path) -> None:
    """Remove the views under readers/<collection>/ that no reader holds, and the folder once it is empty."""
    for path in base.glob("*.lock"):
        try:
            lock = open(path)  # not "a": a lock file another process just removed must stay removed
        except FileNotFoundError:
            continue
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(base / path.stem, ignore_errors=True)
            path.unlink(missing_ok=True)
    if not any(base.glob("*.lock")):
        shutil.rmtree(base, ignore_errors=True)  # with any .N.tmp a reader killed while linking left


def _edge_filter(flt: dict | None):
    if not flt:
        return None
    from qdrant_edge import FieldCondition, Filter, IsEmptyCondition, MatchAny, MatchValue

    must, must_not = [], []
    for key, value in flt.items():
        if value is NONEMPTY:
            must_not.append(IsEmptyCondition(key))
        elif isinstance(value, (list, tuple)):
            must.append(FieldCondition(key, match=MatchAny(list(value))))
        else:
            must.append(FieldCondition(key, match=MatchValue(value)))
    return Filter(must=must or None, must_not=must_not or None)


class ServerBackend:
    """A Qdrant server or cluster through qdrant-client (":memory:" runs the same API in-process)."""

    CATALOG = "kopt_catalog"
    _memory = None  # ":memory:" is one in-process server shared by every index opened on it

    def __init__(self, url: str):
        from qdrant_client import QdrantClient

        try:
            if url == ":memory:":
                ServerBackend._memory = ServerBackend._memory or QdrantClient(":memory:")
                self.client = ServerBackend._memory
            else:
                self.client = QdrantClient(url=url, timeout=30)
            self.client.get_collections()
        except Exception as exc:
            raise IndexError_(f"cannot reach the Qdrant server at {url} ({exc})") from exc
        self.url = url

    def read_catalog(self) -> dict:
        if not self.client.collection_exists(self.CATALOG):
            return {"corpora": {}, "building": {}}
        records, _ = self.client.scroll(self.CATALOG, limit=1, with_payload=True)
        return json.loads(records[0].payload["catalog"]) if records else {"corpora": {}, "building": {}}

    def write_catalog(self, catalog: dict) -> None:
        from qdrant_client import models

        if not self.client.collection_exists(self.CATALOG):
            self.client.create_collection(self.CATALOG, vectors_config={})
        self.client.upsert(self.CATALOG, [models.PointStruct(id=str(uuid.UUID(int=0)), vector={},
                                                             payload={"catalog": json.dumps(catalog)})])
        ops = []
        existing = {a.alias_name for a in self.client.get_aliases().aliases}
        for corpus, entry in catalog.get("corpora", {}).items():
            if corpus in existing:
                ops.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=corpus)))
            ops.append(models.CreateAliasOperation(create_alias=models.CreateAlias(
                collection_name=entry["collection"], alias_name=corpus)))
        if ops:
            self.client.update_collection_aliases(change_aliases_operations=ops)  # one atomic change

    def pin(self) -> dict:
        return self.read_catalog()  # the server keeps a collection readable while it is deleted

    def retire(self, names: list[str]) -> None:
        for name in names:
            self.drop(name)

    @contextmanager
    def writer_lock(self, what: str = "write to the index"):
        yield  # the server serialises writes itself; staging collections keep ingests apart

    def writer(self) -> str | None:
        return None

    def open_writable(self, name: str) -> None:
        pass

    def seal(self, name: str) -> None:
        pass

    def names(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections if c.name != self.CATALOG)

    def create(self, name: str, dim: int) -> None:
        from qdrant_client import models

        if self.client.collection_exists(name):
            self.client.delete_collection(name)
        self.client.create_collection(
            name, vectors_config={key: models.VectorParams(size=dim, distance=models.Distance.COSINE)
                                  for key in (DENSE, QUESTIONS)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)})
        with warnings.catch_warnings():  # the in-process ":memory:" mode ignores payload indexes, and says so
            warnings.simplefilter("ignore", UserWarning)
            for key in KEYWORD_FIELDS:
                self.client.create_payload_index(name, key, models.PayloadSchemaType.KEYWORD)

    def drop(self, name: str) -> None:
        if self.client.collection_exists(name):
            self.client.delete_collection(name)

    def upsert(self, name: str, points: list[Point]) -> None:
        from qdrant_client import models

        self.client.upsert(name, [models.PointStruct(id=pid, payload=payload, vector={
            **_lists(vecs), SPARSE: models.SparseVector(indices=sp[0], values=sp[1])}) for pid, vecs, sp, payload in points])

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_client import models

        if ids:
            self.client.delete(name, points_selector=models.PointIdsList(points=list(ids)))

    def flush(self, name: str) -> None:
        pass

    def count(self, name: str) -> int:
        return self.client.count(name, exact=True).count

    def scroll(self, name: str, flt: dict | None = None, limit: int | None = None, payload: bool = True,
               vectors: bool = False, text: bool = True) -> list[tuple]:
        from qdrant_client import models

        selector = payload if text or not payload else models.PayloadSelectorExclude(exclude=["text"])
        out, offset = [], None
        while True:
            page, offset = self.client.scroll(name, scroll_filter=_client_filter(flt), limit=1024, offset=offset,
                                              with_payload=selector, with_vectors=vectors)
            out += [_point(r) if vectors else (str(r.id), r.payload or {}) for r in page]
            if offset is None or (limit and len(out) >= limit):
                return out[:limit] if limit else out

    def query(self, name: str, searches: dict, limit: int, flt: dict | None, payload: bool = True) -> dict[str, list]:
        from qdrant_client import models

        found = {}
        for key, q in searches.items():
            vec = models.SparseVector(indices=q[0], values=q[1]) if key == SPARSE else list(q)
            res = self.client.query_points(name, query=vec, using=key, limit=limit, query_filter=_client_filter(flt),
                                           with_payload=payload)
            found[key] = [(str(p.id), p.score, p.payload or {}) for p in res.points]
        return found

    def retrieve(self, name: str, ids: list[str], text: bool) -> dict[str, dict]:
        from qdrant_client import models

        selector = ["text"] if text else models.PayloadSelectorExclude(exclude=["text"])
        return {str(r.id): r.payload or {} for r in self.client.retrieve(name, list(ids), with_payload=selector, with_vectors=False)}

    def close(self) -> None:
        if self.client is not ServerBackend._memory:
            self.client.close()


def _client_filter(flt: dict | None):
    if not flt:
        return None
    from qdrant_client import models

    must, must_not = [], []
    for key, value in flt.items():
        if value is NONEMPTY:
            must_not.append(models.IsEmptyCondition(is_empty=models.PayloadField(key=key)))
        elif isinstance(value, (list, tuple)):
            must.append(models.FieldCondition(key=key, match=models.MatchAny(any=list(value))))
        else:
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
    return models.Filter(must=must or None, must_not=must_not or None)


def open_backend(settings):
    return ServerBackend(settings.qdrant_url) if settings.qdrant_url else EdgeBackend(settings.index_path)
