"""Fast `kopt search` / `kopt ask` (issue 20) and an ingest that leaves the CPU to readers (issue 18): the query path
loads no torch, the spinner shows only on a terminal, an ingest lowers its own priority."""

import os
import pty
import select
import subprocess
import sys
import time

import numpy as np

from kopt.index.embed import DEFAULT_MODEL, model_dir

HEAVY = ("torch", "sentence_transformers", "transformers", "llama_index")


def test_a_query_embedding_and_search_load_neither_torch_nor_sentence_transformers(tmp_path):
    """What `kopt search` runs, in a fresh interpreter: open the (empty) index, embed a query; no heavy module loads."""
    code = (
        "import sys\n"
        "from kopt.config import load_settings\n"
        "from kopt.index import open_index\n"
        "from kopt.index.search import _query_embedding\n"
        "open_index(load_settings()).close()\n"
        f"vec = _query_embedding({DEFAULT_MODEL!r}, 'why is my load not vectorized')\n"
        "import kopt.commands.knowledge, kopt.commands.ask, kopt.ask\n"
        f"print(len(vec), sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "KOPT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["384", "[]"]


def test_safetensors_are_read_as_the_library_reads_them():
    from safetensors.numpy import load_file

    from kopt.index.bert_query import read_safetensors

    path = model_dir(DEFAULT_MODEL) / "model.safetensors"
    ours, theirs = read_safetensors(path), load_file(str(path))
    assert ours.keys() == theirs.keys()
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and np.array_equal(ours[name], array), name


def test_the_spinner_names_the_step_on_a_terminal_and_stays_out_of_piped_output(tmp_path):
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home"), "TERM": "xterm", "KOPT_SEARCH_WORKER": "0"}  # in process
    command = [sys.executable, "-m", "kopt.cli", "search", "why is my load not vectorized"]
    piped = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert piped.returncode == 1 and piped.stderr.strip().splitlines() == [piped.stderr.strip()]
    assert "is empty" in piped.stderr and "opening the index" not in piped.stderr
    main, child = pty.openpty()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=child, env=env, cwd=tmp_path)
    os.close(child)
    seen, deadline = b"", time.time() + 120
    while time.time() < deadline:
        if select.select([main], [], [], 0.5)[0]:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(main)
    assert proc.returncode == 1
    text = seen.decode(errors="replace")
    assert "embedding the query and searching" in text and "is empty" in text  # the step it was at, then the error


def test_an_ingest_lowers_its_own_priority():
    code = ("import os\nfrom kopt.commands.knowledge import yield_cpu_to_readers\n"
            "before = os.nice(0)\nyield_cpu_to_readers()\nprint(before, os.nice(0))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    before, after = map(int, done.stdout.split())
    assert after == min(before + 10, 19)
