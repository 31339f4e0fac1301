"""`kopt findings`: every finding id with its meaning, and the rule kopt follows where two ids could fit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kopt.vocabulary import BOUNDARIES, FINDING_IDS

KOPT = str(Path(sys.executable).with_name("kopt"))


def _kopt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KOPT, *args], capture_output=True, text=True, timeout=120)


def test_each_boundary_names_known_ids_on_both_sides():
    for fid, rule in BOUNDARIES.items():
        assert fid in FINDING_IDS
        named = {w for w in re.findall(r"[a-z0-9]+(?:_[a-z0-9]+)+", rule) if w in FINDING_IDS} - {fid}
        assert named, f"{fid}'s rule names no other id"
    assert "too_many_programs" in BOUNDARIES["small_block"] and "small_block" in BOUNDARIES["too_many_programs"]
    assert "scalar_loop" in BOUNDARIES["serial_reduction"]


def test_findings_json_lists_every_id_and_markdown_is_a_table():
    out = _kopt("findings", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["findings"]
    assert [r["id"] for r in rows] == list(FINDING_IDS)
    assert {r["id"]: r["boundary"] for r in rows if r["boundary"]} == BOUNDARIES
    md = _kopt("findings", "small_block", "--markdown").stdout.splitlines()
    assert md[0].startswith("| id |") and md[2].startswith("| small_block | a hard-coded block") and len(md) == 3


def test_an_unknown_id_is_one_line_and_a_non_zero_exit():
    out = _kopt("findings", "small_blok")
    assert out.returncode != 0 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "unknown finding id 'small_blok'" in out.stderr
