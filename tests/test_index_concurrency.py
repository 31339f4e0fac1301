"""Many readers, one writer: real Qdrant Edge indexes on disk, real `kopt` processes, the patterns corpus.

Before versioned views, of two concurrent searches one failed, and every search failed while an ingest ran.
The slow ingest below is the real pipeline in its own process, with a pause after each store of 4 points, so
readers, doctor and a second ingest meet it mid-write (and kill -9 lands mid-write).
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kopt.config import Settings
from kopt.index import open_index
from kopt.ingest.manifest import corpora_dir

QUERY = "uncoalesced global loads fixed by vectorized access"

SEARCHER = """
import json, sys, time
from pathlib import Path
from kopt.config import load_settings
from kopt.index import open_index
ready, go = Path(sys.argv[1]), Path(sys.argv[2])
index = open_index(load_settings())
try:
    first = index.search(sys.argv[3], corpus="patterns", k=3, mode="sparse")
    ready.touch()
    deadline = time.time() + 60
    while not go.exists() and time.time() < deadline:  # every searcher holds its index open at once
        time.sleep(0.05)
    second = index.search(sys.argv[3], corpus="patterns", k=3, mode="sparse")
    print(json.dumps([h.meta["path"] for h in first + second]))
finally:
    index.close()
"""

READER_LOOP = """
import json, os, sys
from kopt.config import load_settings
from kopt.index import open_index
log, stop = open(sys.argv[1], "a"), sys.argv[2]
while not os.path.exists(stop):
    try:
        index = open_index(load_settings())
        try:
            hits = index.search(sys.argv[3], corpus="patterns", k=3, mode="sparse")
            log.write(json.dumps({"version": hits[0].meta["version"]}) + "\\n")
        finally:
            index.close()
    except Exception as exc:
        log.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\\n")
    log.flush()
"""

SLOW_INGEST = """
import sys, time
from kopt.config import load_settings
from kopt.index import backends
from kopt.ingest import pipeline
upsert = backends.EdgeBackend.upsert
def slow(self, name, points):
    upsert(self, name, points)
    print("stored", flush=True)
    time.sleep(float(sys.argv[2]))
backends.EdgeBackend.upsert = slow
pipeline.BATCH = 1  # stores of 4 points
pipeline.ingest_corpus("patterns", load_settings(), path=sys.argv[1], progress=False)
print("done", flush=True)
"""


def env_for(home: Path) -> dict:
    return {**os.environ, "KOPT_HOME": str(home), "HF_HUB_OFFLINE": "1"}


def kopt(home: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env_for(home),
                          cwd=home, timeout=120)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A home with the patterns corpus (a copy, to edit) served, and the vectors of its edited version cached."""
    root = tmp_path_factory.mktemp("concurrency")
    corpus, home = root / "corpus", root / "home"
    shutil.copytree(corpora_dir() / "patterns", corpus)
    home.mkdir()
    edit(corpus, "v2")
    assert kopt(home, "ingest", "patterns", "--path", str(corpus), "--json").returncode == 0
    edit(corpus, None)
    done = kopt(home, "ingest", "patterns", "--path", str(corpus), "--json")
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def site(built, tmp_path, monkeypatch) -> Path:
    """A private copy of the built home and corpus (cp keeps the engine's sparse files sparse)."""
    subprocess.run(["cp", "-a", f"{built}/.", str(tmp_path)], check=True)
    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def edit(corpus: Path, mark: str | None) -> None:
    """Give every pattern file a trailing comment (a new corpus version), or take it away again."""
    for path in sorted(corpus.glob("*.yaml")):
        text = path.read_text().split("\n# edited ")[0]
        path.write_text(text + (f"\n# edited {mark}\n" if mark else ""))


def served_version(site: Path) -> str:
    return json.loads((site / "home" / "index" / "catalog.json").read_text())["corpora"]["patterns"]["version"]


def searchers(site: Path, n: int) -> list[list[str]]:
    ready, go = site / "ready", site / "go"
    ready.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", SEARCHER, str(ready / str(i)), str(go), QUERY], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(site / "home")) for i in range(n)]
    deadline = time.time() + 90
    while len(list(ready.iterdir())) < n and time.time() < deadline and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    opened_together = len(list(ready.iterdir())) == n
    go.touch()
    outs = [p.communicate(timeout=90) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-400:] for _, err in outs if err]
    assert opened_together  # every reader had the index open while the others did
    return [json.loads(out) for out, _ in outs]


def start_slow_ingest(site: Path, pause: float) -> subprocess.Popen:
    edit(site / "corpus", "v2")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_INGEST, str(site / "corpus"), str(pause)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(site / "home"))
    line = proc.stdout.readline()
    assert line.strip() == "stored", proc.stderr.read()[-2000:]  # the new version is being written now
    return proc


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.rglob("*"))
            if p.is_file()}


def views(site: Path) -> dict[str, list[str]]:
    """The reader views (slots) on disk, by collection."""
    readers = site / "home" / "index" / "readers"
    return {base.name: sorted(p.name for p in base.iterdir() if p.is_dir()) for base in readers.iterdir()}


@pytest.mark.parametrize("n", [2, 8])
def test_concurrent_searches_all_succeed(site, n):
    results = searchers(site, n)
    assert len(results) == n and all(r == results[0] and r for r in results)
    slots = views(site)
    assert [len(s) for s in slots.values()] == [n]  # one view each while they were open together
    shutil.rmtree(site / "ready")
    (site / "go").unlink()
    assert searchers(site, n) == results and views(site) == slots  # later readers reuse the free views


def test_kopt_search_cli_beside_a_long_lived_reader(site):
    """Two `kopt search` commands at once, while another reader (an MCP server, say) holds the index open."""
    holder = open_index(Settings(index_path=site / "home" / "index"))
    try:
        env = env_for(site / "home")
        procs = [subprocess.Popen([sys.executable, "-m", "kopt.cli", "search", QUERY, "--corpus", "patterns", "--mode",
                                   "sparse", "--k", "3"], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, cwd=site) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
        assert all(" 1. " in out and "[pattern]" in out for out, _ in outs)
        assert holder.search(QUERY, corpus="patterns", k=1, mode="sparse")
    finally:
        holder.close()


def test_readers_never_change_a_published_version(site):
    coll = json.loads((site / "home" / "index" / "catalog.json").read_text())["corpora"]["patterns"]["collection"]
    path = site / "home" / "index" / "collections" / coll
    before = tree_digest(path)
    searchers(site, 4)
    assert tree_digest(path) == before  # the engine's rewrites on open and close land in each reader's own view


def test_a_dropped_corpus_stays_readable_to_its_readers_until_they_close(site):
    index = open_index(Settings(index_path=site / "home" / "index"))
    try:
        dropped = kopt(site / "home", "index", "drop", "patterns")
        assert dropped.returncode == 0, dropped.stderr
        assert index.search(QUERY, corpus="patterns", k=1, mode="sparse")  # its files live on in the view
    finally:
        index.close()
    root = site / "home" / "index"
    assert not list((root / "collections").iterdir()) and views(site) == {} and not list((root / "trash").iterdir())


def test_searches_during_a_reingest_see_old_then_new(site):
    old = served_version(site)
    kept = open_index(Settings(index_path=site / "home" / "index"))  # opened before the ingest, used after it
    log, stop = site / "reads.jsonl", site / "stop"
    reader = subprocess.Popen([sys.executable, "-c", READER_LOOP, str(log), str(stop), QUERY], env=env_for(site / "home"),
                              stderr=subprocess.PIPE, text=True)
    try:
        ingest = start_slow_ingest(site, 0.3)
        _, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 0, err[-2000:]
        new = served_version(site)
        deadline = time.time() + 60
        while new not in log.read_text() and time.time() < deadline:
            time.sleep(0.1)
    finally:
        stop.touch()
        reader.communicate(timeout=60)
    reads = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r for r in reads if "error" in r] == []
    versions = [r["version"] for r in reads]
    assert new != old and versions[0] == old and versions[-1] == new
    assert versions == sorted(versions, key=lambda v: v == new)  # old ... old, new ... new: never back
    try:
        assert kept.search(QUERY, corpus="patterns", k=1, mode="sparse")[0].meta["version"] == old  # until it reopens
    finally:
        kept.close()
    new_collection = json.loads((site / "home" / "index" / "catalog.json").read_text())["corpora"]["patterns"]["collection"]
    assert list(views(site)) == [new_collection]  # the last reader of the old version took its views away
    assert open_index(Settings(index_path=site / "home" / "index")).search(QUERY, k=1, mode="sparse")[0].meta["version"] == new


def test_doctor_stays_ok_and_a_second_ingest_is_refused_during_an_ingest(site):
    ingest = start_slow_ingest(site, 1.0)
    try:
        doctor = kopt(site / "home", "index", "doctor")
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "BAD" not in doctor.stdout and f"ingest in progress (pid {ingest.pid})" in doctor.stdout
        assert f"another ingest of patterns is running (pid {ingest.pid})" in doctor.stdout  # orphan check skipped
        second = kopt(site / "home", "ingest", "patterns", "--path", str(site / "corpus"))
        assert second.returncode == 1
        assert f"another ingest of patterns is running (pid {ingest.pid})" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        ingest.kill()
        ingest.wait()


def test_killed_ingest_leaves_the_old_version_served_and_the_next_ingest_works(site):
    old = served_version(site)
    ingest = start_slow_ingest(site, 60)
    os.kill(ingest.pid, signal.SIGKILL)  # mid-write: the new version is half stored
    ingest.wait()
    assert served_version(site) == old
    results = searchers(site, 2)
    assert all(results)
    doctor = kopt(site / "home", "index", "doctor")
    assert doctor.returncode == 0 and "interrupted ingest" in doctor.stdout, doctor.stdout + doctor.stderr
    done = kopt(site / "home", "ingest", "patterns", "--path", str(site / "corpus"), "--json")
    assert done.returncode == 0, done.stderr
    new = served_version(site)
    assert new != old
    index = open_index(Settings(index_path=site / "home" / "index"))
    try:
        entry = index.catalog["corpora"]["patterns"]
        assert not index.catalog["building"] and index.backend.count(entry["collection"]) == entry["points"]
        assert index.search(QUERY, k=1, mode="sparse")[0].meta["version"] == new
    finally:
        index.close()
    doctor = kopt(site / "home", "index", "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 0 and report["problems"] == [] and report["orphans"] == []  # the build resumed


def worker_pid(settings) -> int | None:
    """The pid of the index's search worker (the kernel's SO_PEERCRED of its socket), or None when none runs."""
    import socket
    import struct

    from kopt.index.worker import address

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(address(settings.index_path))
        except ConnectionRefusedError:
            return None
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
        sock.sendall(b"{}\n")  # not a request: it answers "failed" and goes on
        return pid


def stop_worker(settings) -> None:
    pid = worker_pid(settings)
    if pid:
        os.kill(pid, signal.SIGTERM)


def test_the_search_worker_answers_as_the_index_does_and_follows_each_new_version(site):
    from kopt.errors import KoptError
    from kopt.index import worker

    settings = Settings(index_path=site / "home" / "index")
    args = (QUERY,)
    kwargs = {"corpus": "patterns", "k": 5, "mode": "hybrid"}
    try:
        assert worker.call(settings, "search", *args, **kwargs) is None  # none yet: this call started one
        deadline = time.time() + 90
        while (hits := worker.call(settings, "search", *args, **kwargs)) is None and time.time() < deadline:
            time.sleep(0.2)
        index = open_index(settings)
        try:
            here = index.search(*args, **kwargs)
        finally:
            index.close()
        assert hits and [(h.cite(), h.score) for h in hits] == [(h.cite(), h.score) for h in here]
        old = served_version(site)
        assert {h.meta["version"] for h in hits} == {old}
        with pytest.raises(KoptError, match="'nope' is not in the index"):
            worker.call(settings, "search", QUERY, corpus="nope")

        edit(site / "corpus", "v2")
        done = kopt(site / "home", "ingest", "patterns", "--path", str(site / "corpus"), "--json")
        assert done.returncode == 0, done.stderr
        new = served_version(site)
        assert new != old
        hits = worker.call(settings, "search", *args, **kwargs)  # the first request after the publish
        assert hits and {h.meta["version"] for h in hits} == {new}

        cli = [sys.executable, "-m", "kopt.cli", "search", QUERY, "--corpus", "patterns", "--k", "3"]
        through_worker = subprocess.run(cli, capture_output=True, text=True, env=env_for(site / "home"), cwd=site)
        in_process = subprocess.run(cli, capture_output=True, text=True, cwd=site,
                                    env={**env_for(site / "home"), "KOPT_SEARCH_WORKER": "0"})
        assert through_worker.returncode == in_process.returncode == 0
        assert through_worker.stdout == in_process.stdout and f"@{new}" in through_worker.stdout
    finally:
        stop_worker(settings)


def test_a_worker_leaves_when_idle_a_second_one_at_once_and_none_starts_when_turned_off(site, monkeypatch):
    from kopt.index import worker

    settings = Settings(index_path=site / "home" / "index")
    serve = [sys.executable, "-c", "import sys; from pathlib import Path; from kopt.index.worker import serve; "
                                   "serve(Path(sys.argv[1]), idle=float(sys.argv[2]))", str(settings.index_path)]
    first = subprocess.Popen([*serve, "30"], env=env_for(site / "home"))
    try:
        deadline = time.time() + 60
        while worker_pid(settings) is None and time.time() < deadline:
            time.sleep(0.1)
        assert worker_pid(settings) == first.pid
        second = subprocess.run([*serve, "30"], env=env_for(site / "home"), timeout=60)  # the name is taken: leaves
        assert second.returncode == 0 and first.poll() is None
    finally:
        first.terminate()
        first.wait(timeout=30)
    idle = subprocess.run([*serve, "0.5"], env=env_for(site / "home"), timeout=60)  # nobody asks: it leaves by itself
    assert idle.returncode == 0

    started = []
    monkeypatch.setattr(worker, "start", started.append)
    assert worker.call(settings, "search", QUERY, corpus="patterns") is None and started  # none runs: start one
    monkeypatch.setenv("KOPT_SEARCH_WORKER", "0")
    started.clear()
    assert worker.call(settings, "search", QUERY, corpus="patterns") is None and not started
