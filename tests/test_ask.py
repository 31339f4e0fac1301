"""`kopt ask` end to end: a real Triton compile, a real Qdrant Edge index on disk (a small triton-pkg
slice copied from the installed package at test time), and a loopback OpenAI-compatible server."""

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STRIDED = ROOT / "examples" / "strided_scale.py"


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    import triton

    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("home")
    mp.setenv("KOPT_HOME", str(home))
    mp.setenv("HF_HUB_OFFLINE", "1")
    pkg = home / "pkg"
    for rel in ("backends/compiler.py",):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(triton.__file__).parent / rel, pkg / rel)
    from kopt.config import load_settings
    from kopt.ingest import ingest_corpus

    s = load_settings(workspace=home)
    ingest_corpus("triton-pkg", s, path=pkg, progress=False)
    yield s
    mp.undo()


def test_why_no_vectorization_offline(settings):
    from kopt.ask import ask

    steps = []  # what the CLI's spinner shows, in order
    answer = ask("why no vectorization here", kernel=STRIDED, line=15, settings=settings, step=steps.append)
    assert steps[:3] == ["opening the index", "compiling strided_scale.py and reading its lowered code",
                         "reading the compiler's reasons for misaligned_access"]
    assert steps[-1] == "searching the compiler source"
    assert answer.line == 15 and answer.facts and "ld.global.b32" in answer.facts[0]
    assert "stride_x=1" in answer.facts[0]  # the runtime stride's known divisibility
    assert answer.findings_text[0].startswith("misaligned_access")
    assert any("divisib" in m and "contigu" in m for m in answer.mechanism)
    assert any(c["cite"].startswith("backends/compiler.py:") and "get_int_specialization" in c["symbol"]
               for c in answer.citations)
    assert any("getContiguity" in s for s in answer.symbols)
    assert any("multiple_of" in f for f in answer.fix) and any("16" in f for f in answer.fix)
    assert answer.prose is None


def test_the_compile_runs_while_the_index_opens_and_its_error_is_a_finding(settings, tmp_path):
    """The compile (a wait on the compile worker) starts first, in a thread, so the index and the pass notes load
    meanwhile; a kernel that does not compile still answers with the compile_failure finding at its line."""
    import threading

    from kopt.ask import ask

    bad = tmp_path / "bad.py"
    bad.write_text(STRIDED.read_text().replace("    s = tl.load(s_ptr + row)\n",
                                               "    s = tl.load(s_ptr + row)\n    z = tl.arange(0, 3)\n"))
    compiling = []

    def step(text):
        if text == "opening the index":
            compiling.append(any(t.name == "kopt-ask-compile" and t.is_alive() for t in threading.enumerate()))

    answer = ask("why does it not compile", kernel=bad, line=15, settings=settings, step=step)
    assert compiling == [True]
    assert answer.findings_text[0].startswith("compile_failure") and "bad.py:17" in answer.findings_text[0]
    assert "power of 2" in answer.findings_text[0] and not answer.facts


@pytest.mark.parametrize("task", [STRIDED, ROOT / "evals" / "diagnosis" / "attention_spill.py"])
def test_without_the_sass_the_facts_and_findings_are_the_same(task, tmp_path):
    """ask compiles without the SASS of a kernel that uses no local memory: on real compiles its L3 facts and
    findings are those of the full compile, less the evidence lines that count SASS opcodes; a spilling kernel is
    still disassembled (ptxas reports local memory), so its STL/LDL and register_spill finding stay."""
    from kopt.diagnose.l3 import attribute
    from kopt.harness.compile import compile_task
    from kopt.task import load_task

    loaded = load_task(task)
    lean = attribute(compile_task(loaded, trajectory=True, sass=False, cache_dir=tmp_path), str(task))
    full = attribute(compile_task(loaded, trajectory=True, cache_dir=tmp_path), str(task))
    assert lean.lines == full.lines and lean.findings
    assert [f.id for f in lean.findings] == [f.id for f in full.findings]
    for thin, whole in zip(lean.findings, full.findings):
        assert (thin.message, thin.confidence, thin.kernel_lines, thin.conditions) == \
               (whole.message, whole.confidence, whole.kernel_lines, whole.conditions)
        assert all(e in whole.evidence for e in thin.evidence)
        assert all(e.source == "sass" for e in whole.evidence if e not in thin.evidence)
    spills = "register_spill" in [f.id for f in full.findings]
    assert spills == (task != STRIDED) and (lean.kernels[0]["sass"] != {}) == spills


class _Canned(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Canned.seen.append(body)
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": "The stride is not known divisible by 16 [1]."}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_llm_prose_is_grounded_in_the_evidence(settings):
    from kopt.ask import ask
    from kopt.config import load_settings
    from kopt.llm import make_llm

    server = HTTPServer(("127.0.0.1", 0), _Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        s = load_settings(workspace=settings.workspace, llm_provider="openai-like", llm_model="canned",
                          llm_base_url=f"http://127.0.0.1:{server.server_port}/v1")
        answer = ask("why no vectorization here", kernel=STRIDED, line=15, settings=s, llm=make_llm(s))
    finally:
        server.shutdown()
    assert answer.prose == "The stride is not known divisible by 16 [1]." and answer.llm == "canned"
    sent = "\n".join(m["content"] for m in _Canned.seen[-1]["messages"])
    assert "ONLY the facts and sources" in sent and "ld.global.b32" in sent and "[1] " in sent


def test_ask_cli_json_and_bad_kernel(settings, tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "KOPT_HOME": os.environ["KOPT_HOME"], "HF_HUB_OFFLINE": "1"}
    kopt = [sys.executable, "-m", "kopt.cli"]
    done = subprocess.run(kopt + ["ask", "why no vectorization here", "--kernel", f"{STRIDED}:15", "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["line"] == 15
    bad = subprocess.run(kopt + ["ask", "why", "--kernel", str(tmp_path / "nope.py")], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert bad.returncode == 1 and "nope.py: no such task file" in bad.stderr and "Traceback" not in bad.stderr


def test_a_function_chunked_in_parts_is_cited_once():
    """make_launcher is one ~480-line function stored as several chunks: a reader wants it once, the best part."""
    from kopt.ask import _cite
    from kopt.vocabulary import Evidence

    def part(lines: str, symbol: str, path: str = "backends/nvidia/driver.py") -> Evidence:
        return Evidence("L4", "compiler_source", f"{symbol} {lines}", {"symbol": symbol, "excerpt": "..."},
                        f"{path}:{lines}@triton-3.6.0")

    seen: set[str] = set()
    first = _cite([part("127-206", "make_launcher"), part("367-446", "make_launcher"), part("674-716", "CudaLauncher"),
                   part("23-92", "make_launcher", path="backends/compiler.py")], seen)
    again = _cite([part("527-600", "make_launcher"), part("720-760", "")], seen)
    assert [c["cite"] for c in first] == ["backends/nvidia/driver.py:127-206@triton-3.6.0",
                                          "backends/nvidia/driver.py:674-716@triton-3.6.0",
                                          "backends/compiler.py:23-92@triton-3.6.0"]
    assert [c["cite"] for c in again] == ["backends/nvidia/driver.py:720-760@triton-3.6.0"]


def test_a_plain_question_reads_the_pass_notes_too(settings, tmp_path, monkeypatch):
    """Without --kernel, ask searches the pass notes beside the compiler source and says what it found: their
    sections join the mechanism and their files the sources; an index without them says how to add them."""
    from kopt.ask import ask
    from kopt.config import load_settings
    from kopt.ingest import ingest_corpus

    bare = ask("why are my loads not vectorized", settings=settings)
    assert any("kopt ingest passes" in n for n in bare.notes) and not bare.mechanism

    monkeypatch.setenv("KOPT_HOME", str(tmp_path / "home"))
    notes_only = load_settings(workspace=tmp_path)
    ingest_corpus("passes", notes_only, progress=False)
    steps = []
    answer = ask("why are my loads not vectorized", settings=notes_only, step=steps.append)
    assert steps[-1] == "searching the pass notes"
    assert answer.mechanism and any("AxisInfo" in m for m in answer.mechanism)
    assert any(c["corpus"] == "passes" and c["cite"].startswith("axis-info.md:") for c in answer.citations)
