"""Many callers at one search worker (issue 18): a real worker pool on a real on-disk index of the patterns corpus.

The worker forks processes that all accept on the index's socket; concurrent callers must get exactly the hits a lone
search gives, and a publish mid-way must give each caller one whole version, never a failure.

The ingests run in this process (kopt.ingest.ingest_corpus, what `kopt ingest` runs): the model loads once, and the
publish can be held until the callers are mid-flight, so they hammer the pool only around the publish (`kopt ingest`
runs at nice 10 under readers: callers hammering through all of it starved it for minutes on 2 cores).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kopt.config import Settings
from kopt.index import open_index, worker
from kopt.ingest import ingest_corpus, pipeline
from kopt.ingest.manifest import corpora_dir

QUERIES = ["uncoalesced global loads fixed by vectorized access", "shared memory bank conflicts in a transpose",
           "too many pipeline stages run out of shared memory", "a persistent grid for many small tiles",
           "online softmax in one pass", "atomics contend on one address", "int64 offsets for large tensors",
           "hoist loads out of the loop", "fuse the epilogue into the matmul", "eviction policy for streamed data",
           "dot shapes smaller than 16", "layout conversion between blocked and mma", "autotune the block sizes",
           "grouped program order for L2 reuse", "half precision operands for tensor cores",
           "tail wave leaves SMs idle"]
POOL = 4  # more answering processes than this box has cores: they must still answer each caller correctly


def env_for(home: Path) -> dict:
    return {**os.environ, "KOPT_HOME": str(home), "HF_HUB_OFFLINE": "1"}


def ingest(root: Path) -> None:
    """`kopt ingest patterns --path ROOT/corpus` into ROOT/home (its index and its vector cache), in this process."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KOPT_HOME", str(root / "home"))
        ingest_corpus("patterns", Settings(index_path=root / "home" / "index"), path=root / "corpus", progress=False)


def edit(corpus: Path, mark: str | None) -> None:
    """Give every pattern file a trailing comment (a new corpus version), or take it away again."""
    for path in sorted(corpus.glob("*.yaml")):
        text = path.read_text().split("\n# edited ")[0]
        path.write_text(text + (f"\n# edited {mark}\n" if mark else ""))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A home serving the patterns corpus (a copy, to edit), with the vectors of its edited version cached."""
    root = tmp_path_factory.mktemp("workers")
    shutil.copytree(corpora_dir() / "patterns", root / "corpus")
    (root / "home").mkdir()
    edit(root / "corpus", "v2")
    ingest(root)
    edit(root / "corpus", None)
    ingest(root)
    return root


@pytest.fixture
def pool(built, tmp_path, monkeypatch):
    """A private copy of the built site and a worker pool of POOL processes serving it (the only worker); stopped
    afterwards."""
    subprocess.run(["cp", "-a", f"{built}/.", str(tmp_path)], check=True)
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(worker, "start", lambda path: None)  # only this pool answers: no worker starts on its own
    settings = Settings(index_path=tmp_path / "home" / "index")
    code = "import sys; from pathlib import Path; from kopt.index.worker import serve; serve(Path(sys.argv[1]), processes=int(sys.argv[2]))"
    proc = subprocess.Popen([sys.executable, "-c", code, str(settings.index_path), str(POOL)], env=env_for(tmp_path / "home"))
    try:
        deadline = time.time() + 120
        while worker.call(settings, "search", QUERIES[0], corpus="patterns", k=1) is None:
            assert proc.poll() is None and time.time() < deadline, "the worker did not answer"
            time.sleep(0.2)
        yield tmp_path, settings, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alone(settings, queries: list[str]) -> list[list[tuple]]:
    """Each query's hits from the index opened in this process, one query at a time."""
    index = open_index(settings)
    try:
        return [[(h.cite(), h.score) for h in index.search(q, corpus="patterns", k=5, mode="hybrid")] for q in queries]
    finally:
        index.close()


def test_concurrent_callers_get_what_each_query_gets_alone_and_the_pool_dies_with_its_worker(pool):
    site, settings, proc = pool
    answering = children(proc.pid)
    assert len(answering) == POOL
    with ThreadPoolExecutor(len(QUERIES)) as callers:
        replies = list(callers.map(lambda q: worker.call(settings, "search", q, corpus="patterns", k=5, mode="hybrid"),
                                   QUERIES))
    assert all(r is not None for r in replies)  # None: the worker failed or timed out, the caller fell back
    for query, hits, lone in zip(QUERIES, replies, alone(settings, QUERIES)):
        assert [(h.cite(), h.score) for h in hits] == lone, query
    assert len({tuple(h.cite() for h in hits) for hits in replies}) > 1  # different queries, different answers

    proc.send_signal(signal.SIGTERM)  # stopping the worker stops every answering process
    proc.wait(timeout=30)
    deadline = time.time() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in answering) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in answering)
    assert worker.call(settings, "search", QUERIES[0], corpus="patterns") is None  # the name went with them


def test_a_publish_during_concurrent_queries_gives_each_reply_one_version_and_no_failure(pool, monkeypatch):
    site, settings, _ = pool
    old = json.loads((settings.index_path / "catalog.json").read_text())["corpora"]["patterns"]["version"]
    ready, mid_flight, published, replies = threading.Event(), threading.Event(), threading.Event(), []
    publish = pipeline._publish

    def held_publish(*args, **kwargs) -> None:
        """The new version is built: let the callers loose, and swap the catalog once replies are flowing."""
        ready.set()
        assert mid_flight.wait(120), "the callers got no replies"
        publish(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_publish", held_publish)

    def caller(n: int) -> None:
        assert ready.wait(300), "the ingest never reached its publish"
        i = n
        while True:
            after = published.is_set()  # set before this query was sent: it must see the new version
            hits = worker.call(settings, "search", QUERIES[i % len(QUERIES)], corpus="patterns", k=5, mode="hybrid")
            replies.append((after, None if hits is None else {h.meta["version"] for h in hits}))
            if len(replies) >= 8:
                mid_flight.set()
            if after:
                return
            i += 4

    with ThreadPoolExecutor(4) as callers:
        running = [callers.submit(caller, n) for n in range(4)]
        edit(site / "corpus", "v2")
        try:
            ingest(site)  # publishes a new catalog while the callers keep asking
        finally:
            ready.set()
            published.set()
        for r in running:
            r.result()
    new = json.loads((settings.index_path / "catalog.json").read_text())["corpora"]["patterns"]["version"]
    assert new != old
    assert all(versions is not None for _, versions in replies), replies  # no caller fell back to in-process
    assert all(len(versions) == 1 for _, versions in replies), replies  # each reply from one version
    assert {v for after, versions in replies if after for v in versions} == {new}
    assert {v for after, versions in replies if not after for v in versions} >= {old}
