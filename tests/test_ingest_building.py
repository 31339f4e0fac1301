"""An unfinished build in the index catalog records its ingest's pid and host, so `kopt index list` tells a live
ingest from an interrupted one. Real ingest into a real Qdrant Edge index, real processes as owners."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import triton

from kopt.index.backends import EdgeBackend


def kopt(*args, home):
    env = {**os.environ, "KOPT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=120)


def test_index_list_tells_a_live_ingest_from_an_interrupted_one(tmp_path, monkeypatch):
    monkeypatch.setenv("KOPT_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pkg = tmp_path / "pkg" / "backends"
    pkg.mkdir(parents=True)
    (pkg / "compiler.py").write_bytes((Path(triton.__file__).parent / "backends/compiler.py").read_bytes())
    from kopt.config import load_settings
    from kopt.ingest import ingest_corpus

    ingest_corpus("triton-pkg", load_settings(workspace=tmp_path), path=pkg.parent, progress=False)
    backend = EdgeBackend(tmp_path / "index")
    catalog = backend.read_catalog()
    assert catalog["building"] == {} and "owner" not in catalog["corpora"]["triton-pkg"]  # a finished build has none

    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        catalog["building"]["triton"] = {"collection": "triton-abc-g1", "version": "abc", "model": "m", "dim": 384,
                                         "pipeline": 4, "owner": {"pid": worker.pid, "host": socket.gethostname()}}
        backend.write_catalog(catalog)
        live = kopt("index", "list", home=tmp_path)
        assert live.returncode == 0, live.stderr
        assert f"ingest in progress (pid {worker.pid})" in live.stdout and "re-run" not in live.stdout
        assert "triton-pkg" in live.stdout  # the served corpus is still listed
        state = json.loads(kopt("index", "list", "--json", home=tmp_path).stdout)["building"]["triton"]["state"]
        assert state == f"ingest in progress (pid {worker.pid})"
    finally:
        worker.kill()
        worker.wait()
    dead = kopt("index", "list", home=tmp_path)
    assert "interrupted ingest into triton-abc-g1; re-run `kopt ingest triton`" in dead.stdout
