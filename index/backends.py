"""Two storage backends behind one small interface: Qdrant Edge on disk, or a Qdrant server.

Each collection holds one corpus at one version, with a dense vector `dense` and a BM25 sparse
vector `bm25` (IDF modifier). Which collection serves a corpus is kept in a catalog: a JSON file
replaced atomically (Edge), or a `kopt_catalog` collection plus real Qdrant aliases (server).
Filters are plain dicts: {key: value | [values]} means "matches (any of)"; {key: NONEMPTY} means
"the list field has at least one element".
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

from kopt.errors import IndexError_

DENSE, SPARSE = "dense", "bm25"
NONEMPTY = object()
KEYWORD_FIELDS = ("corpus", "path", "language", "kind", "symbols", "passes", "qualname")
Point = tuple[str, list[float], tuple[list[int], list[float]], dict]


def entry_collections(entry: dict) -> list[str]:
    """The collections a catalog entry owns: its chunks, and the side collection of its files' commit subjects."""
    return [c for c in (entry["collection"], entry.get("history")) if c]


class EdgeBackend:
    """Qdrant Edge shards under <index_path>/collections/<name>, catalog in <index_path>/catalog.json."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._shards: dict[str, object] = {}

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

    @contextmanager
    def writer_lock(self):
        """One ingest at a time per index; a second one fails fast instead of interleaving."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".write.lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise IndexError_(f"{self.root} is locked by another ingest", hint="wait for it, or stop it") from exc
            yield

    # -- collections ----------------------------------------------------------------------
    def names(self) -> list[str]:
        base = self.root / "collections"
        return sorted(p.name for p in base.iterdir()) if base.is_dir() else []

    def create(self, name: str, dim: int) -> None:
        from qdrant_edge import (Distance, EdgeConfig, EdgeShard, EdgeSparseVectorParams, EdgeVectorParams, Modifier,
                                 PayloadSchemaType, UpdateOperation)

        path = self.root / "collections" / name
        shutil.rmtree(path, ignore_errors=True)
        shard = EdgeShard.create(str(path), EdgeConfig(
            vectors={DENSE: EdgeVectorParams(size=dim, distance=Distance.Cosine)},
            sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)}))
        for key in KEYWORD_FIELDS:
            shard.update(UpdateOperation.create_field_index(key, PayloadSchemaType.Keyword))
        self._shards[name] = shard

    def _shard(self, name: str):
        if name not in self._shards:
            from qdrant_edge import EdgeShard

            path = self.root / "collections" / name
            if not path.is_dir():
                raise IndexError_(f"index collection {name} is missing under {self.root}", hint="re-run `kopt ingest`")
            try:
                self._shards[name] = EdgeShard.load(str(path))
            except Exception as exc:  # the engine reports corruption and locks as plain exceptions
                if "WouldBlock" in str(exc):  # another process holds the shard's WAL lock
                    raise IndexError_(f"{path}: the index is in use by another kopt process (an ingest?)",
                                      hint="try again when it has finished") from exc
                raise IndexError_(f"{path}: cannot open index collection ({exc})", hint="run `kopt index doctor`") from exc
        return self._shards[name]

    def drop(self, name: str) -> None:
        shard = self._shards.pop(name, None)
        if shard is not None:
            shard.close()
        shutil.rmtree(self.root / "collections" / name, ignore_errors=True)

    def upsert(self, name: str, points: list[Point]) -> None:
        from qdrant_edge import Point as EdgePoint, SparseVector, UpdateOperation

        self._shard(name).update(UpdateOperation.upsert_points([
            EdgePoint(pid, {DENSE: list(vec), SPARSE: SparseVector(indices=sp[0], values=sp[1])}, payload)
            for pid, vec, sp, payload in points]))

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_edge import UpdateOperation

        if ids:
            self._shard(name).update(UpdateOperation.delete_points(list(ids)))

    def flush(self, name: str) -> None:
        self._shard(name).flush()

    def count(self, name: str) -> int:
        from qdrant_edge import CountRequest

        return self._shard(name).count(CountRequest(exact=True))

    def scroll(self, name: str, flt: dict | None = None, limit: int | None = None, payload: bool = True) -> list[tuple[str, dict]]:
        from qdrant_edge import ScrollRequest

        out, offset = [], None
        while True:
            page, offset = self._shard(name).scroll(ScrollRequest(offset=offset, limit=1024, filter=_edge_filter(flt),
                                                                   with_payload=payload, with_vector=False))
            out += [(str(r.id), r.payload or {}) for r in page]
            if offset is None or (limit and len(out) >= limit):
                return out[:limit] if limit else out

    def query(self, name: str, dense, sparse, limit: int, flt: dict | None) -> tuple[list, list]:
        """Dense and sparse nearest neighbours (either may be None): lists of (id, score, payload)."""
        from qdrant_edge import Query, QueryBatchRequest, QueryRequest, SparseVector

        requests, order = [], []
        for key, q in ((DENSE, dense), (SPARSE, sparse)):
            if q is None:
                continue
            vec = SparseVector(indices=q[0], values=q[1]) if key == SPARSE else list(q)
            requests.append(QueryRequest(limit=limit, query=Query.Nearest(vec, using=key), filter=_edge_filter(flt),
                                         with_payload=True))
            order.append(key)
        results = self._shard(name).query_batch(QueryBatchRequest(requests)) if requests else []
        found = {k: [(str(p.id), p.score, p.payload or {}) for p in r] for k, r in zip(order, results)}
        return found.get(DENSE, []), found.get(SPARSE, [])

    def close(self) -> None:
        for shard in self._shards.values():
            shard.close()
        self._shards.clear()


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

    @contextmanager
    def writer_lock(self):
        yield  # the server serialises writes itself; staging collections keep ingests apart

    def names(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections if c.name != self.CATALOG)

    def create(self, name: str, dim: int) -> None:
        from qdrant_client import models

        if self.client.collection_exists(name):
            self.client.delete_collection(name)
        self.client.create_collection(
            name, vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
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
            DENSE: list(vec), SPARSE: models.SparseVector(indices=sp[0], values=sp[1])}) for pid, vec, sp, payload in points])

    def delete(self, name: str, ids: list[str]) -> None:
        from qdrant_client import models

        if ids:
            self.client.delete(name, points_selector=models.PointIdsList(points=list(ids)))

    def flush(self, name: str) -> None:
        pass

    def count(self, name: str) -> int:
        return self.client.count(name, exact=True).count

    def scroll(self, name: str, flt: dict | None = None, limit: int | None = None, payload: bool = True) -> list[tuple[str, dict]]:
        out, offset = [], None
        while True:
            page, offset = self.client.scroll(name, scroll_filter=_client_filter(flt), limit=1024, offset=offset,
                                              with_payload=payload, with_vectors=False)
            out += [(str(r.id), r.payload or {}) for r in page]
            if offset is None or (limit and len(out) >= limit):
                return out[:limit] if limit else out

    def query(self, name: str, dense, sparse, limit: int, flt: dict | None) -> tuple[list, list]:
        from qdrant_client import models

        found = {}
        for key, q in ((DENSE, dense), (SPARSE, sparse)):
            if q is None:
                continue
            vec = models.SparseVector(indices=q[0], values=q[1]) if key == SPARSE else list(q)
            res = self.client.query_points(name, query=vec, using=key, limit=limit, query_filter=_client_filter(flt),
                                           with_payload=True)
            found[key] = [(str(p.id), p.score, p.payload or {}) for p in res.points]
        return found.get(DENSE, []), found.get(SPARSE, [])

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
