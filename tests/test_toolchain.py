"""Toolchains: target parsing, and `kopt toolchain add|list|doctor` as a user runs them (real subprocesses)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kopt.errors import KoptError
from kopt.toolchain import parse_target, toolchain_home

KOPT = [sys.executable, "-m", "kopt.cli"]
REAL_ASCEND = toolchain_home("ascend")  # the one the test command set up (KOPT_HOME as it is at collection)


def kopt(*args, home: Path, **env):
    return subprocess.run([*KOPT, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KOPT_HOME": str(home), **env})


def test_parse_target():
    assert parse_target("ascend") == ("ascend", "Ascend910B3")
    assert parse_target("ascend:Ascend910B4") == ("ascend", "Ascend910B4")
    assert parse_target("sm_80") == ("nvidia", "sm_80")
    assert parse_target(None) == ("nvidia", "sm_90")
    with pytest.raises(KoptError, match="unknown target 'rocm'"):
        parse_target("rocm")


def test_list_and_doctor_without_the_toolchain(tmp_path):
    listed = kopt("toolchain", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    by_name = {tc["name"]: tc for tc in json.loads(listed.stdout)["items"]}
    assert by_name["nvidia"]["ready"] and by_name["nvidia"]["facts"]["triton"] == "3.6.0"
    assert not by_name["ascend"]["ready"]
    doctor = kopt("toolchain", "doctor", "ascend", home=tmp_path)
    assert doctor.returncode == 1
    assert "kopt toolchain add ascend" in doctor.stderr and "Traceback" not in doctor.stderr


def test_add_with_a_bad_interpreter_is_one_line(tmp_path):
    proc = kopt("toolchain", "add", "ascend", "--python", str(tmp_path / "no-python"), home=tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("kopt: error: could not create a venv") and "Traceback" not in proc.stderr


def test_add_when_pip_cannot_reach_packages_says_so_and_keeps_the_log(tmp_path):
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "empty"), "PIP_EXTRA_INDEX_URL": ""}
    proc = kopt("toolchain", "add", "ascend", home=tmp_path, **offline)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "pip could not install the ascend toolchain" in last and "re-run to retry" in last
    assert (tmp_path / "toolchains" / "ascend" / "pip-install.log").is_file()


@pytest.mark.skipif(not (REAL_ASCEND / "bin" / "python").exists(),
                    reason="the Ascend toolchain is not set up: run `kopt toolchain add ascend` first")
def test_add_is_idempotent_on_a_ready_toolchain():
    manifest = REAL_ASCEND / "toolchain.json"
    before = manifest.stat().st_mtime if manifest.exists() else None
    proc = kopt("toolchain", "add", "ascend", "--json", home=REAL_ASCEND.parent.parent)
    assert proc.returncode == 0, proc.stderr
    tc = json.loads(proc.stdout)
    assert tc["ready"] and tc["facts"]["triton"] == "3.2.0"
    assert Path(tc["facts"]["adapter_opt"]).name == "triton-adapter-opt"
    assert (manifest.stat().st_mtime if manifest.exists() else None) == before  # nothing reinstalled
