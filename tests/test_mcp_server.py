"""`kopt mcp` as a subprocess, driven by the real MCP client over stdio: tools listed with typed schemas,
search / diagnose / compile_ir on an example task, rounds recorded through the harness (a wrong candidate
is recorded as incorrect, a right one as validated-but-untimed on CPU), paths outside the workspace refused;
over HTTP, only with the bearer token. (Hostile clients and tasks: test_mcp_fuzz.py.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
KOPT = str(Path(sys.executable).with_name("kopt"))
TOOLS = {"search", "ask", "compile_ir", "diagnose", "validate", "bench", "profile", "start_run", "record_round",
         "runs", "synthesize"}
EVIDENCE = [{"level": "L1", "source": "source", "summary": "BLOCK_SIZE fixed at 1024", "location": "vector_add.py:22"}]


@pytest.fixture(scope="module")
def env(patterns_index_env) -> dict[str, str]:
    return patterns_index_env


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """The vector-add example, a wrong candidate (drops the last block), a right one (another block size),
    and two ways out of the workspace: a symlink and an absolute path."""
    ws = tmp_path / "ws"
    ws.mkdir()
    source = (ROOT / "examples" / "vector_add.py").read_text()
    (ws / "vector_add.py").write_text(source)
    wrong = source.replace("grid = lambda meta: (triton.cdiv(n, meta[\"BLOCK_SIZE\"]),)",
                           "grid = lambda meta: (n // meta[\"BLOCK_SIZE\"],)")
    right = source.replace("BLOCK_SIZE=1024", "BLOCK_SIZE=2048")
    assert wrong != source and right != source
    (ws / "wrong.py").write_text(wrong)
    (ws / "right.py").write_text(right)
    (ws / "cheat.py").write_text(right.replace("return x + y", "return x + y + 0"))  # edits the reference
    shutil.copy(ROOT / "examples" / "strided_scale.py", ws / "strided_scale.py")
    outside = tmp_path / "outside.py"
    outside.write_text(right)
    (ws / "escape.py").symlink_to(outside)
    return ws


async def _session(workspace: Path, env: dict[str, str], body) -> None:
    params = StdioServerParameters(command=KOPT, args=["mcp", "--workspace", str(workspace)], env=env, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await body(session)


def _run(workspace: Path, env: dict[str, str], body) -> None:
    anyio.run(_session, workspace, env, body)


def test_tools_search_compile_diagnose(workspace, env):
    async def body(s: ClientSession) -> None:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        assert set(listed) == TOOLS
        record = listed["record_round"]
        assert {"run_id", "hypothesis", "evidence", "candidate"} <= set(record.input_schema["required"])
        assert "outcome" in record.output_schema["properties"]

        found = await s.call_tool("search", {"query": "autotune block sizes num_warps", "corpus": ["patterns"], "k": 3})
        assert not found.is_error, found.content
        hits = found.structured_content["hits"]
        assert hits and all(h["cite"].count("@") == 1 for h in hits)
        assert any("autotune" in h["text"].lower() for h in hits)
        graph = await s.call_tool("search", {"query": "autotune block sizes num_warps", "corpus": ["patterns"], "k": 3,
                                             "mode": "hybrid+graph"})
        assert not graph.is_error, graph.content
        assert graph.structured_content["hits"]

        progress: list[tuple[float, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, message))

        ir = await s.call_tool("compile_ir", {"task": "vector_add.py", "stage": "ptx", "target": "sm_90"},
                               progress_callback=on_progress)
        assert not ir.is_error, ir.content
        kernel = ir.structured_content["kernels"][0]
        assert kernel["name"] == "add_kernel" and kernel["target"] == "sm_90"
        assert "ld.global.v4.b32" in kernel["ir"]  # aligned, contiguous: 16-byte vector loads
        assert progress and "compiling" in (progress[0][1] or "")

        diag = await s.call_tool("diagnose", {"task": "vector_add.py", "gpu": False})
        assert not diag.is_error, diag.content
        result = diag.structured_content
        assert result["root_cause"]["id"] == result["findings"][0]["id"]
        assert {lvl["level"] for lvl in result["levels"]} == {"L1", "L2", "L3", "L4"}
        assert next(lvl for lvl in result["levels"] if lvl["level"] == "L2")["status"] == "skipped"

        why = await s.call_tool("ask", {"question": "why is this load not vectorized", "kernel": "strided_scale.py"})
        assert not why.is_error, why.content
        answer = why.structured_content
        assert answer["line"] and any("ld.global.b32" in fact for fact in answer["facts"])
        assert any("multiple_of" in fix for fix in answer["fix"])

        bad_stage = await s.call_tool("compile_ir", {"task": "vector_add.py", "target": "gfx9000"})
        assert bad_stage.is_error and "unknown target" in bad_stage.content[0].text

    _run(workspace, env, body)
    if "TRITON_CACHE_DIR" not in env:  # compiles cache inside the workspace, like everything the server writes
        assert any((workspace / ".kopt" / "cache" / "triton").iterdir())


def test_rounds_validated_before_recorded(workspace, env):
    async def body(s: ClientSession) -> None:
        run = await s.call_tool("start_run", {"task": "vector_add.py"})
        assert not run.is_error, run.content
        run_id = run.structured_content["run_id"]
        assert run.structured_content["timing"]["available"] is False

        wrong = await s.call_tool("record_round", {
            "run_id": run_id, "hypothesis": "integer grid division is enough", "evidence": EVIDENCE,
            "candidate": "wrong.py", "finding_ids": ["untuned_config"], "level_reached": "L1"})
        assert not wrong.is_error, wrong.content
        assert wrong.structured_content["outcome"] == "incorrect"
        assert "NaN" in wrong.structured_content["message"] or "outside" in wrong.structured_content["message"]

        phases: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            phases.append((done, total, message))

        right = await s.call_tool("record_round", {
            "run_id": run_id, "hypothesis": "a larger block keeps more bytes in flight", "evidence": EVIDENCE,
            "candidate": "right.py", "finding_ids": ["untuned_config"], "pattern_id": "autotune_configs"},
            progress_callback=on_progress)
        steps = [m.split(" (")[0] for _, _, m in phases]
        assert steps.index("validating right.py") < steps.index("recording the round")
        assert [d for d, _, _ in phases] == sorted(d for d, _, _ in phases) and phases[-1][1] == 4
        assert not right.is_error, right.content
        assert right.structured_content["outcome"] == "untimed"  # validated on CPU; no GPU to time it
        assert right.structured_content["speedup_initial"] is None

        cheat = await s.call_tool("record_round", {
            "run_id": run_id, "hypothesis": "loosen the check", "evidence": EVIDENCE, "candidate": "cheat.py"})
        assert cheat.structured_content["outcome"] == "rejected"
        assert "reference" in cheat.structured_content["message"]

        listed = await s.call_tool("runs", {"run_id": run_id[:-2]})  # a unique prefix will do
        rounds = listed.structured_content["rounds"]
        assert [(r["n"], r["outcome"]) for r in rounds] == [(1, "incorrect"), (2, "untimed"), (3, "rejected")]
        assert rounds[1]["evidence"]["candidate"] == rounds[1]["candidate"]

        no_evidence = await s.call_tool("record_round", {
            "run_id": run_id, "hypothesis": "trust me", "evidence": [], "candidate": "right.py"})
        assert no_evidence.is_error and "evidence" in no_evidence.content[0].text

    _run(workspace, env, body)
    # the store is the rounds store everyone uses, in the workspace's .kopt/
    from kopt.rounds.store import RoundsStore

    store = RoundsStore(workspace / ".kopt")
    try:
        (run,) = store.runs()
        assert [r.outcome for r in store.rounds(run.run_id)] == ["incorrect", "untimed", "rejected"]
        assert store.get(store.rounds(run.run_id)[1].candidate) == (workspace / "right.py").read_text()
    finally:
        store.close()


def test_paths_outside_workspace_refused(workspace, env):
    outside = workspace.parent / "outside.py"

    async def body(s: ClientSession) -> None:
        for args in ({"task": str(outside)}, {"task": "../outside.py"}, {"task": "escape.py"}):
            refused = await s.call_tool("validate", args)
            assert refused.is_error and "outside the workspace" in refused.content[0].text, args
        refused = await s.call_tool("validate", {"task": "vector_add.py", "candidate": "escape.py"})
        assert refused.is_error and "outside the workspace" in refused.content[0].text
        missing = await s.call_tool("compile_ir", {"task": "nope.py"})
        assert missing.is_error and "no such file" in missing.content[0].text
        alive = await s.call_tool("runs", {})  # the server survived every refusal
        assert not alive.is_error and alive.structured_content["runs"] == []

    _run(workspace, env, body)
    assert not (outside.parent / ".kopt").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_needs_the_bearer_token(workspace, env):
    """Without a token kopt makes one and prints it; requests without it, or with another, get 401; the MCP
    client with it lists the tools."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    plain_env = {k: v for k, v in env.items() if k != "KOPT_MCP_TOKEN"}
    server = subprocess.Popen([KOPT, "mcp", "--transport", "http", "--port", str(port), "--workspace", str(workspace)],
                              env=plain_env, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        assert "Authorization: Bearer " in line, line
        token = line.split("Authorization: Bearer ")[1].split("'")[0]
        assert len(token) >= 32
        url = f"http://127.0.0.1:{port}/mcp"
        probe = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        with httpx2.Client() as http:
            for _ in range(600):  # until the server listens
                try:
                    http.get(url)
                    break
                except httpx2.TransportError:
                    time.sleep(0.1)
            for headers in ({}, {"Authorization": "Bearer wrong-token-of-the-same-length-xxxxxxxxx"},
                            {"Authorization": token}):
                refused = http.post(url, json=probe, headers={"Accept": "application/json, text/event-stream",
                                                               **headers})
                assert refused.status_code == 401, (headers, refused.status_code)

        async def listed() -> set[str]:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
                    streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return {t.name for t in (await s.list_tools()).tools}

        assert anyio.run(listed) == TOOLS
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_http_beyond_loopback_needs_a_chosen_token(workspace, env):
    plain_env = {k: v for k, v in env.items() if k != "KOPT_MCP_TOKEN"}
    for extra, words in ((["--host", "0.0.0.0"], "not a loopback address"),
                         (["--host", "10.1.2.3", "--token", "short"], "at least 16")):
        done = subprocess.run([KOPT, "mcp", "--transport", "http", "--workspace", str(workspace), *extra],
                              env=plain_env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and done.stdout == "", done.stderr
        err = done.stderr.strip()
        assert "\n" not in err and err.startswith("kopt: error: ") and words in err, err


def test_synthesize_writes_only_inside_the_workspace(workspace, env):
    """Two recorded wins of the same kind become a pattern: written under the workspace's .kopt/patterns,
    not KOPT_HOME (the index in KOPT_HOME is left alone too, with a note saying how to publish)."""
    from kopt.rounds.store import Round, RoundsStore

    source = (workspace / "vector_add.py").read_text()
    hinted = source.replace("offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)",
                            "offsets = tl.max_contiguous(tl.multiple_of(pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE), "
                            "BLOCK_SIZE), BLOCK_SIZE)")
    assert hinted != source
    store = RoundsStore(workspace / ".kopt")
    try:
        for op in ("add_a", "add_b"):
            run = store.create_run(workspace / f"{op}.py", source, {"op": op}, [1.0] * 5, {"available": True}, {})
            store.add_round(Round(
                run_id=run.run_id, n=1, level_reached="L3", hypothesis="hint contiguity", finding_ids=["uncoalesced_access"],
                hypothesis_key="uncoalesced_access/llm", pattern_id=None, proposer="llm:m", candidate=store.put(hinted),
                outcome="improved", case_times=[0.5] * 5, speedup_initial=2.0, speedup_best=2.0, seconds=1.0))
    finally:
        store.close()
    home_patterns = Path(env["KOPT_HOME"]) / "patterns"

    async def body(s: ClientSession) -> None:
        done = await s.call_tool("synthesize", {})
        assert not done.is_error, done.content
        result = done.structured_content
        assert Path(result["out"]) == workspace.resolve() / ".kopt" / "patterns"
        written = [a["path"] for a in result["actions"] if a["path"]]
        assert written and all(Path(p).resolve().is_relative_to(workspace.resolve()) for p in written), result
        assert "outside the workspace" in result["index"]

    _run(workspace, env, body)
    assert not home_patterns.exists()
