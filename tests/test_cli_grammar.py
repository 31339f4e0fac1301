"""One grammar across kopt's commands, as a user (or a script) meets it through a real `kopt` process:
`--json` is always one object with `schema` and `kopt`, errors under `--json` are JSON too, one wording
for the flag, `--case` is always an index into CASES, typos get a suggestion, `kopt doctor` and
`kopt --version` say what kopt runs with, and `--help` imports nothing heavy."""

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kopt import __version__
from kopt.cli import cli
from kopt.output import JSON_HELP, SCHEMA, envelope

ROOT = Path(__file__).resolve().parents[1]
KOPT_SCRIPT = Path(sys.executable).parent / "kopt"


def kopt(*args, cwd, env=None, timeout=300):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    env.pop("KOPT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


def as_document(done) -> dict:
    """stdout is exactly one JSON object in the envelope."""
    doc = json.loads(done.stdout)
    assert isinstance(doc, dict) and doc["schema"] == SCHEMA and doc["kopt"] == __version__, doc
    return doc


def all_commands(group: click.Group, ctx: click.Context, prefix=()):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from all_commands(cmd, click.Context(cmd, parent=ctx), (*prefix, name))


def test_every_json_flag_has_one_wording_and_every_case_is_an_index():
    ctx = click.Context(cli)
    with_json, cases = [], []
    for path, cmd in all_commands(cli, ctx):
        for param in cmd.params:
            if isinstance(param, click.Option) and "--json" in param.opts:
                with_json.append(path)
                assert param.help == JSON_HELP, path
            if isinstance(param, click.Option) and "--case" in param.opts:
                cases.append(path)
                assert param.type is click.INT and "index into the task's cases" in param.help.lower(), path
    assert {("diagnose",), ("compile",)} <= set(cases)
    assert {("doctor",), ("runs", "list"), ("skills", "list"), ("index", "list"), ("eval", "diagnosis")} <= set(with_json)


@pytest.mark.parametrize("args", [
    ("skills", "list", "--json"),
    ("toolchain", "list", "--json"),
    ("runs", "list", "--json"),
    ("index", "list", "--json"),
    ("index", "doctor", "--json"),
    ("compile", str(ROOT / "examples" / "vector_add.py"), "--stage", "ttir", "--json"),
    ("diagnose", str(ROOT / "examples" / "strided_scale.py"), "--no-gpu", "--level", "L1", "--json"),
], ids=lambda a: " ".join(a[:2]))
def test_json_output_is_one_object_with_schema(tmp_path, args):
    done = kopt(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = as_document(done)
    assert "error" not in doc
    if args[:2] in (("skills", "list"), ("toolchain", "list"), ("runs", "list"), ("compile", args[1])):
        assert isinstance(doc["items"], list)  # a list result keeps its entries under `items`


@pytest.mark.parametrize("args, kind, code", [
    (("diagnose", "nope.py", "--json"), "error", 1),
    (("runs", "show", "nope", "--json"), "error", 1),
    (("index", "drop", "nothing-here", "--json"), "error", 1),
    (("compile", "x.py", "--stage", "bogus", "--json"), "usage", 2),
    (("dignose", "x.py", "--json"), "usage", 2),
])
def test_errors_under_json_are_a_json_object(tmp_path, args, kind, code):
    done = kopt(*args, cwd=tmp_path)
    assert done.returncode == code, (done.stdout, done.stderr)
    doc = as_document(done)
    assert doc["kind"] == kind and doc["error"]
    assert "Traceback" not in done.stderr


def test_without_json_an_error_stays_one_stderr_line(tmp_path):
    done = kopt("diagnose", "nope.py", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "" and done.stderr == "kopt: error: nope.py: no such task file\n"


def test_envelope_wraps_lists_and_writes_dates_in_iso_8601():
    doc = envelope([{"run_id": "r1", "created": 0.0, "rounds": [{"n": 1, "created": 86400}]}])
    assert doc == {"schema": SCHEMA, "kopt": __version__, "items": [
        {"run_id": "r1", "created": "1970-01-01T00:00:00+00:00", "rounds": [{"n": 1, "created": "1970-01-02T00:00:00+00:00"}]}]}
    assert envelope({"a": 1, "seconds": 2.5}) == {"schema": SCHEMA, "kopt": __version__, "a": 1, "seconds": 2.5}


@pytest.mark.parametrize("args, suggestion", [
    (("dignose", "x.py"), "Did you mean 'diagnose'?"),
    (("toolchain", "lst"), "Did you mean 'list'?"),
    (("eval", "diagnoss"), "Did you mean 'diagnosis'?"),
    (("diagnose", "x.py", "--jsn"), "Did you mean '--json'?"),
])
def test_a_typo_gets_a_suggestion(tmp_path, args, suggestion):
    done = kopt(*args, cwd=tmp_path)
    assert done.returncode == 2 and suggestion in done.stderr, done.stderr


def test_doctor_lists_what_kopt_runs_with(tmp_path):
    done = kopt("doctor", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = as_document(done)
    assert {"versions", "gpu", "toolchains", "config", "index", "models", "sandbox", "problems"} <= set(doc)
    assert doc["versions"]["triton"] and doc["versions"]["torch"] and doc["problems"] == []
    assert Path(doc["toolchains"]["ptxas"]["path"]).is_file()
    assert [tc["name"] for tc in doc["toolchains"]["toolchains"]][:1] == ["nvidia"]
    assert doc["index"]["corpora"] == []  # the test session's empty KOPT_HOME
    assert doc["models"]["embedder"]["present"] is True
    assert doc["models"]["query_encoder"].startswith("3-layer student")
    assert [layer["layer"] for layer in doc["config"]["layers"]] == ["defaults", "user config", "kopt.toml", "environment"]
    (tmp_path / "kopt.toml").write_text('target = "sm_80"\n')
    again = as_document(kopt("doctor", "--json", cwd=tmp_path))
    assert again["config"]["settings"]["target"] == {"value": "sm_80", "from": "kopt.toml"}
    assert again["config"]["layers"][2] == {"layer": "kopt.toml", "file": str(tmp_path / "kopt.toml"), "present": True}
    text = kopt("doctor", cwd=tmp_path)
    assert text.returncode == 0 and "ptxas:" in text.stdout and "target = sm_80 (from kopt.toml)" in text.stdout


def test_version_names_triton_torch_and_the_gpu(tmp_path):
    from importlib import metadata

    done = kopt("--version", cwd=tmp_path)
    assert done.returncode == 0
    line = done.stdout.strip()
    assert line.startswith(f"kopt {__version__} (python ") and f"triton {metadata.version('triton')}" in line
    assert f"torch {metadata.version('torch')}" in line and "GPU: " in line


def test_help_stays_light_and_names_completion(tmp_path):
    probe = ("import sys\nfrom kopt.cli import cli\ntry:\n    cli.main(['--help'], prog_name='kopt')\nexcept SystemExit:\n"
             "    pass\nprint('HEAVY', sorted(m for m in ('torch', 'triton', 'qdrant_edge', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "HEAVY []" in done.stdout and "doctor" in done.stdout, done.stdout + done.stderr
    assert "_KOPT_COMPLETE=bash_source kopt" in done.stdout


@pytest.mark.skipif(not KOPT_SCRIPT.is_file(), reason="the kopt script is not installed beside this interpreter")
def test_shell_completion_completes_commands(tmp_path):
    env = {**os.environ, "_KOPT_COMPLETE": "bash_source"}
    script = subprocess.run([str(KOPT_SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "_kopt_completion" in script.stdout
    env = {**os.environ, "_KOPT_COMPLETE": "bash_complete", "COMP_WORDS": "kopt dia", "COMP_CWORD": "1"}
    done = subprocess.run([str(KOPT_SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.stdout.split() == ["plain,diagnose"]


def test_a_failed_validation_under_json_is_one_document_with_the_error(tmp_path):
    """The result and its failure in one JSON object on stdout; the one-line error still goes to stderr."""
    wrong = tmp_path / "vector_add_wrong.py"
    source = (ROOT / "examples" / "vector_add.py").read_text()
    wrong.write_text(source.replace("tl.store(out_ptr + offsets, x + y, mask=mask)", "tl.store(out_ptr + offsets, x - y, mask=mask)"))
    done = kopt("validate", str(ROOT / "examples" / "vector_add.py"), "--candidate", str(wrong), "--device", "cpu",
                "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    doc = as_document(done)
    assert doc["ok"] is False and doc["kind"] == "incorrect" == doc["reason"] and doc["error"].startswith(str(wrong))
    assert done.stderr.startswith(f"kopt: error: {wrong}: incorrect")
