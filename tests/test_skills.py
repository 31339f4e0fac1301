"""Shipped skills are well-formed SKILL.md files, teach the discipline, and `kopt skills install` copies them
without ever clobbering a file the user changed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kopt.commands.skills import front_matter, shipped_skills, skills_root

KOPT = str(Path(sys.executable).with_name("kopt"))
ROOT = Path(__file__).resolve().parents[1]


def _kopt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KOPT, *args], capture_output=True, text=True, timeout=120)


def test_skills_are_well_formed_and_teach_the_discipline():
    skills = shipped_skills()
    assert len(skills) >= 3
    text = ""
    for name, description, folder in skills:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64
        assert name == folder.name  # agents find a skill by its folder
        assert 20 < len(description) <= 1024 and "Use when" in description
        text += (folder / "SKILL.md").read_text()
    for rule in ("one hypothesis", "record_round", "validate", "evidence", "L1", "L4", "failed", "untimed"):
        assert rule.lower() in text.lower(), rule
    agents = (ROOT / "AGENTS.md").read_text()
    for rule in ("One hypothesis per round", "Cite evidence", "Always validate and record", "record_round"):
        assert rule in agents


def test_front_matter_is_required(tmp_path):
    bad = tmp_path / "SKILL.md"
    bad.write_text("# no front matter\n")
    try:
        front_matter(bad)
    except Exception as exc:
        assert "front matter" in str(exc)
    else:
        raise AssertionError("accepted a SKILL.md without front matter")


def test_install_copies_and_never_clobbers(tmp_path):
    dest = tmp_path / ".claude" / "skills"
    done = _kopt("skills", "install", str(dest), "--json")
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)["files"]
    assert {f["status"] for f in files} == {"written"}
    for name, _, folder in shipped_skills():
        assert (dest / name / "SKILL.md").read_text() == (folder / "SKILL.md").read_text()

    again = json.loads(_kopt("skills", "install", str(dest), "--json").stdout)["files"]
    assert {f["status"] for f in again} == {"unchanged"}

    mine = dest / shipped_skills()[0][0] / "SKILL.md"
    mine.write_text(mine.read_text() + "\nmy local note\n")
    refused = _kopt("skills", "install", str(dest))
    assert refused.returncode == 1 and "--force" in refused.stderr and str(mine) in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "my local note" in mine.read_text()  # the user's edit survived
    forced = _kopt("skills", "install", str(dest), "--force")
    assert forced.returncode == 0 and "my local note" not in mine.read_text()


def test_list_names_every_skill():
    listed = json.loads(_kopt("skills", "list", "--json").stdout)["items"]
    assert [s["name"] for s in listed] == [n for n, _, _ in shipped_skills()]
    assert all(Path(s["path"]).parent == skills_root() for s in listed)
