"""A warm search worker per index: `kopt search` asks it instead of opening the index itself.

Opening an index costs the engine ~80-140 ms a collection (it maps and checks every segment) and closing
it ~20-80 ms; a search on an open one takes ~4 ms. So the first `kopt search` of an index starts a worker
(`python -m kopt.index.worker INDEX`, its own session, no terminal) and searches in process as before;
the next ones send their query over a Unix socket and get the hits back.

- **Never stale.** Before each request the worker compares catalog.json's inode and mtime with those it
  opened the index at; an ingest or drop publishes by replacing the catalog, so the first request after a
  publish reopens the index and pins the new version (readers see the old version, then the new one).
- **Starts and stops by itself.** The socket is in Linux's abstract namespace: it goes away with its
  process, so no file is left behind, and a second worker of the same index cannot bind it and exits.
  A worker leaves after IDLE_SECONDS without a request, or when its index folder is gone.
- **Many callers at once.** The worker binds the name, then forks PROCESSES children (min(8, cores), or
  KOPT_SEARCH_WORKERS) that all accept on it (the kernel hands each connection to an idle one), each with its own
  open index and its own reopen; a search is mostly Python, so threads would queue on the GIL. The pool leaves when none of it has had a request for
  IDLE_SECONDS; the children die with the worker.
- **Only for its user.** Each end checks the other's uid (SO_PEERCRED): an abstract name has no file
  permissions, so another user could bind it first, or connect.
- **Optional.** Its name carries kopt's version and the mtimes of the index sources and the glossary, so
  changed code never answers through an old worker. When there is no worker, it fails, or it is slow
  (QUERY_TIMEOUT), the caller searches in process; KOPT_SEARCH_WORKER=0 turns workers off; a Qdrant server
  (qdrant_url) needs none.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

from kopt.unix_socket import read_all, read_line, same_user

IDLE_SECONDS = 120.0
QUERY_TIMEOUT = 10.0  # a client waits this long for its hits before it searches in process
OPS = ("search", "lookup_symbol", "find_emitter")
# 8 callers at once during a re-ingest on the H200's 16-core host: one process 8.5x a lone search, 4 processes 2.05x,
# 8 processes 1.04x (evals/RESULTS.md, issue 18). Each holds its own open index (~350 MB proportional set size for
# Triton + triton-ascend), so a pool of 8 costs ~2.8 GB while in use (it leaves after IDLE_SECONDS);
# KOPT_SEARCH_WORKERS sets another size
PROCESSES = max(1, int(os.environ.get("KOPT_SEARCH_WORKERS") or min(8, os.cpu_count() or 1)))
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def address(index_path: Path) -> bytes:
    """The abstract socket name of the worker for this index, this kopt version, these index sources and models, and
    this query encoder (KOPT_QUERY_ENCODER: a worker embeds queries one way)."""
    from kopt import __version__
    from kopt.index import query_encoder

    here = Path(__file__).parent
    glossary = here.parent / "corpora" / "glossary.toml"  # beside kopt/index when installed, and in the checkout
    sources = [*here.glob("*.py"), *here.glob("models/*"), *([glossary] if glossary.is_file() else [])]
    stamp = max(p.stat().st_mtime_ns for p in sources)
    key = f"{Path(index_path).resolve()}|{__version__}|{stamp}|{query_encoder()}"
    return b"\0kopt-search-" + hashlib.sha256(key.encode()).hexdigest()[:24].encode()


def call(settings, op: str, *args, **kwargs) -> list | None:
    """The hits of `Index.<op>(*args, **kwargs)` from the index's warm worker; None when the caller should
    run it in process (no worker yet: one is started for the next call; workers off; the worker failed)."""
    if settings.qdrant_url or os.environ.get("KOPT_SEARCH_WORKER") == "0":
        return None
    name = address(settings.index_path)
    request = json.dumps({"op": op, "args": args, "kwargs": kwargs}).encode() + b"\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(QUERY_TIMEOUT)
            sock.connect(name)
            if not same_user(sock):  # anyone may bind an abstract name: hits come only from our own user
                return None
            sock.sendall(request)
            reply = json.loads(read_all(sock))
    except (ConnectionRefusedError, FileNotFoundError):
        start(settings.index_path)
        return None
    except (OSError, ValueError):  # slow, killed mid-reply, or a reply that is not JSON
        return None
    if "error" in reply:
        from kopt import errors

        raise getattr(errors, reply["kind"], errors.KoptError)(reply["error"], hint=reply.get("hint"))
    if "hits" not in reply:
        return None
    from kopt.index.hits import Hit, StoredChunk

    return [Hit(h["score"], h["text"], StoredChunk.from_payload(h["meta"])) for h in reply["hits"]]


def start(index_path: Path) -> None:
    """Start a worker for this index, detached (its own session, no terminal); it exits at once if one runs."""
    try:
        subprocess.Popen([sys.executable, "-m", "kopt.index.worker", str(Path(index_path).resolve())],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, cwd="/")
    except OSError:  # no worker then: searches stay in process
        pass


def serve(index_path: Path, idle: float = IDLE_SECONDS, processes: int = PROCESSES) -> None:
    """Bind the index's name, then answer on `processes` forked children until the pool has been idle for `idle`
    seconds or the index folder is gone; this process only waits for them (they die with it)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address(index_path))
    except OSError:  # another worker serves this index
        return
    sock.listen(64)
    import multiprocessing  # here: a client (`kopt search`) imports this module and never needs it

    last_request = multiprocessing.RawValue("d", time.time())  # shared: the pool leaves when all of it is idle
    parent = os.getpid()
    children = []
    for _ in range(processes):  # forked before numpy or the engine load: no threads to copy
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _die_with(parent)
                _answer(sock, index_path, idle, last_request)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)  # never return into the caller's code, nor run its exit handlers
        children.append(pid)
    sock.close()  # the children hold the name now
    for pid in children:
        os.waitpid(pid, 0)


def _die_with(parent: int) -> None:
    """Have the kernel end this child when the worker it was forked from ends (SIGTERM to the worker stops all)."""
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it ended before prctl
        os._exit(0)


def _answer(sock: socket.socket, index_path: Path, idle: float, last_request) -> None:
    """Answer requests one at a time on the shared socket: the kernel hands each connection to an idle process."""
    from kopt.config import Settings
    from kopt.errors import KoptError
    from kopt.index.search import Index

    index, opened_at = None, None

    def current() -> Index:
        """The open index, reopened first when a new catalog is published since it was opened."""
        nonlocal index, opened_at
        stamp = _catalog_stamp(index_path)
        if index is None or stamp != opened_at:
            if index is not None:
                index.close()
                index = None
            opened_at = stamp
            index = Index(Settings(index_path=index_path))
        return index

    try:
        try:  # open every collection, load the query encoder and read the points' fields now, not in the first request
            current().search("warm up the search worker", k=1)
            current().preload()
        except KoptError:  # an empty or broken index: each request will say so
            pass
        while index_path.is_dir():
            idle_left = idle - (time.time() - last_request.value)  # the others may have answered meanwhile
            if idle_left <= 0:
                return
            sock.settimeout(idle_left)
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            last_request.value = time.time()
            with conn:
                conn.settimeout(5.0)
                if not same_user(conn):
                    continue
                try:
                    request = json.loads(read_line(conn))
                    if request["op"] not in OPS:
                        raise ValueError(f"unknown op {request['op']!r}")
                    hits = getattr(current(), request["op"])(*request["args"], **request["kwargs"])
                    reply = {"hits": [h.to_dict() for h in hits]}
                except KoptError as exc:
                    reply = {"error": exc.args[0], "hint": exc.hint, "kind": type(exc).__name__}
                except Exception as exc:  # a bad request or a bug: the client searches in process and shows it
                    reply = {"failed": f"{type(exc).__name__}: {exc}"}
                try:
                    conn.sendall(json.dumps(reply).encode())
                except OSError:  # the client gave up waiting
                    pass
    finally:
        if index is not None:
            index.close()
        sock.close()




def _catalog_stamp(index_path: Path) -> tuple | None:
    try:
        st = os.stat(index_path / "catalog.json")
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size






if __name__ == "__main__":
    serve(Path(sys.argv[1]))
