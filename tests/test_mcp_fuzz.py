"""`kopt mcp` against a hostile client and hostile tasks, through the real MCP client over stdio.

Every tool is called with malformed, oversized and odd arguments (NUL bytes, over-long strings and paths, a
10 MB query, wrong types, missing arguments, negative numbers, huge lists): each call is one clear error line
naming the argument, and the server never dies. Tasks that os._exit() or raise SystemExit at import, hang at
import, or hang in their kernel's entry fail their own call (the server kills the child and what it started)
while the server keeps answering other tools, even during the hang."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
KOPT = str(Path(sys.executable).with_name("kopt"))
EVIDENCE = [{"level": "L1", "source": "source", "summary": "BLOCK_SIZE fixed at 1024", "location": "vector_add.py:22"}]
VALID = {  # a well-formed value for every required argument
    "query": "autotune block sizes", "question": "why is this slow", "task": "vector_add.py", "run_id": "r1",
    "hypothesis": "a larger block", "evidence": EVIDENCE, "candidate": "vector_add.py"}
PATH_ARGS = {"task", "candidate", "kernel", "path"}
# The hangs below end at these tool limits (the test waits them out): long enough for start_run's child to start its
# sandboxed validate and for search and runs to answer meanwhile on a 2-core machine; compile_ir's harness gives up
# a quarter of its limit earlier (mcp_server.HARNESS_GRACE_S).
HANG_LIMIT_S = 20


@pytest.fixture(scope="module")
def env(patterns_index_env) -> dict[str, str]:
    return patterns_index_env


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    source = (ROOT / "examples" / "vector_add.py").read_text()
    (ws / "vector_add.py").write_text(source)
    (ws / "exits.py").write_text("import os\nos._exit(7)\n" + source)
    (ws / "sysexit.py").write_text("raise SystemExit(3)\n" + source)
    (ws / "sleeps.py").write_text("import time\ntime.sleep(3600)\n" + source)
    (ws / "hangs_in_entry.py").write_text(source + "\n\ndef entry(*args):\n    while True:\n        pass\n")
    (ws / "binary.py").write_bytes(bytes(range(256)))
    (ws / "latin1.py").write_bytes(source.replace("out = x + y", "out = x + y (caf\xe9)").encode("latin-1"))
    (ws / "adir").mkdir()
    return ws


def _run(workspace: Path, env: dict[str, str], body, *extra: str) -> None:
    async def session() -> None:
        params = StdioServerParameters(command=KOPT, args=["mcp", "--workspace", str(workspace), *extra], env=env,
                                       cwd=str(ROOT))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            await body(s)

    anyio.run(session)


def _bad_values(schema: dict) -> list[tuple[str, object]]:
    """(what, value) pairs the schema forbids, for one argument."""
    kinds = [schema] + schema.get("anyOf", [])
    types = {k.get("type") for k in kinds}
    out: list[tuple[str, object]] = [("wrong type", {"not": "this"})]
    if "string" in types:
        longest = max(k.get("maxLength", 0) for k in kinds)
        out += [("NUL byte", "vector_add.py\0.txt"), ("too long", "x" * (longest + 1))]
    if "integer" in types or "number" in types:
        out += [("negative", -1), ("not a number", "many")]
    if "array" in types:
        out += [("huge list", ["x"] * 10_000), ("not a list", "x")]
    if "boolean" in types:
        out += [("not a bool", "perhaps")]
    if any("enum" in k for k in kinds):
        out += [("not in enum", "L9")]
    return out


def assert_clear(result, tool: str, *words: str) -> None:
    assert result.is_error, (tool, words, result.structured_content)
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: ") and len(text) > len(f"Error executing tool {tool}: ") + 10
    assert "\n" not in text and "internal error" not in text and len(text) < 2_000, text
    for word in words:
        assert word in text, (word, text)


def test_every_tool_rejects_bad_arguments_by_name(workspace, env):
    calls: list[int] = []

    async def body(s: ClientSession) -> None:
        tools = {t.name: t.input_schema for t in (await s.list_tools()).tools}
        for name, schema in tools.items():
            required = schema.get("required", [])
            base = {arg: VALID[arg] for arg in required}
            for arg in required:  # each required argument missing in turn
                missing = {k: v for k, v in base.items() if k != arg}
                assert_clear(await s.call_tool(name, missing), name, f"argument '{arg}' is required")
                calls.append(1)
            for arg, prop in schema["properties"].items():
                for _what, value in _bad_values(prop):
                    result = await s.call_tool(name, {**base, arg: value})
                    assert_clear(result, name, f"argument '{arg}")
                    calls.append(1)
            for arg in PATH_ARGS & set(schema["properties"]):
                assert_clear(await s.call_tool(name, {**base, arg: "d/" * 2500}), name, f"argument '{arg}'")
        huge = "why " * 2_500_000  # 10 MB
        for name, arg in (("search", "query"), ("ask", "question")):
            assert_clear(await s.call_tool(name, {arg: huge}), name, f"argument '{arg}'", "at most 4000")
        bad_evidence = await s.call_tool("record_round", {**{a: VALID[a] for a in tools["record_round"]["required"]},
                                                          "evidence": [{"level": "L9", "summary": 3}]})
        assert_clear(bad_evidence, "record_round", "evidence.0.level", "evidence.0.source")
        alive = await s.call_tool("search", {"query": "autotune num_warps", "corpus": ["patterns"], "k": 2})
        assert not alive.is_error and alive.structured_content["hits"], alive.content

    _run(workspace, env, body)
    assert len(calls) > 100  # every tool, every argument: the schema walk did not silently skip


def test_odd_but_well_formed_arguments_are_clear_errors(workspace, env):
    """Values the schema accepts but the workspace or the task refuses: one line each, never an internal error."""
    async def body(s: ClientSession) -> None:
        odd = [
            ("synthesize", {}, "no rounds store"),  # first: `runs` below creates the store
            ("compile_ir", {"task": "adir"}, "is a directory"),
            ("compile_ir", {"task": "/etc/passwd"}, "outside the workspace"),
            ("compile_ir", {"task": "binary.py"}, "binary file"),
            ("compile_ir", {"task": "latin1.py"}, "not UTF-8"),
            ("diagnose", {"task": "latin1.py"}, "not UTF-8"),
            ("compile_ir", {"task": "vector_add.py", "case": 99}, "no case 99"),
            ("compile_ir", {"task": "vector_add.py", "kernel": "nope"}, "no kernel named 'nope'"),
            ("diagnose", {"task": "\u202e.py"}, "no such file"),
            ("validate", {"task": "vector_add.py", "candidate": "adir"}, "is a directory"),
            ("ask", {"question": "why", "kernel": "vector_add.py:abc"}, "not a line number"),
            ("ask", {"question": "   "}, "empty question"),
            ("search", {"query": "autotune block sizes", "corpus": ["nope"]}, "'nope' is not in the index"),
            ("runs", {"run_id": "no-such-run"}, "no-such-run"),
            ("record_round", {**{a: VALID[a] for a in ("run_id", "hypothesis", "evidence", "candidate")},
                              "finding_ids": ["made_up"]}, "unknown finding id"),
        ]
        for tool, args, words in odd:
            assert_clear(await s.call_tool(tool, args), tool, words)
        assert not (await s.call_tool("runs", {})).is_error

    _run(workspace, env, body)


def _ours(workspace: Path, marker: str) -> list[int]:
    """Live processes started for this workspace whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")) == workspace.resolve() and \
                    marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_hostile_tasks_fail_their_own_call_only(workspace, env):
    async def body(s: ClientSession) -> None:
        for tool, args in (("compile_ir", {"task": "exits.py"}), ("diagnose", {"task": "exits.py", "gpu": False}),
                           ("ask", {"question": "why", "kernel": "exits.py"}), ("start_run", {"task": "exits.py"})):
            assert_clear(await s.call_tool(tool, args), tool, "exited with status 7")
        assert_clear(await s.call_tool("compile_ir", {"task": "sysexit.py"}), "compile_ir", "status 3")
        assert_clear(await s.call_tool("diagnose", {"task": "sysexit.py", "gpu": False}), "diagnose", "exit(3)")
        checked = await s.call_tool("validate", {"task": "exits.py"})
        assert not checked.is_error and checked.structured_content["ok"] is False
        assert checked.structured_content["reason"] and checked.structured_content["message"]  # the sandbox's words

        order: list[str] = []

        async def hang(tool: str, args: dict, *words: str) -> None:
            assert_clear(await s.call_tool(tool, args), tool, *words)
            order.append(tool)

        workers: set[int] = set()

        async def watch() -> None:  # the sandboxed validate that start_run starts, while it hangs
            while "start_run" not in order:
                workers.update(_ours(workspace, "kopt.harness.worker"))
                await anyio.sleep(0.2)

        async with anyio.create_task_group() as tg:
            # compile_ir: the harness's sandbox gives up inside the tool's limit; start_run: the tool's limit
            tg.start_soon(hang, "compile_ir", {"task": "sleeps.py"}, "timeout", "killed")
            tg.start_soon(hang, "start_run", {"task": "hangs_in_entry.py"}, f"no answer within {HANG_LIMIT_S} s",
                          "--tool-timeout start_run=")
            tg.start_soon(watch)
            await anyio.sleep(0)
            found = await s.call_tool("search", {"query": "autotune num_warps", "corpus": ["patterns"], "k": 2})
            assert not found.is_error and found.structured_content["hits"]
            listed = await s.call_tool("runs", {})
            assert not listed.is_error
            order.append("search and runs")
        assert order[0] == "search and runs"  # they answered while both hangs were in flight
        # the children are gone, and so is the sandboxed validate the hanging start_run had started
        for _ in range(50):  # SIGKILL is asynchronous: give the kernel a moment to take them away
            left = _ours(workspace, "kopt.mcp_server") + _ours(workspace, "kopt.harness.worker")
            if not left:
                break
            await anyio.sleep(0.1)
        assert left == [] and workers, workers  # a worker was running, and it was killed with its parent
        after = await s.call_tool("validate", {"task": "vector_add.py"})
        assert not after.is_error and after.structured_content["ok"] is True

    _run(workspace, env, body, "--tool-timeout", f"compile_ir={HANG_LIMIT_S}", "--tool-timeout",
         f"start_run={HANG_LIMIT_S}")
