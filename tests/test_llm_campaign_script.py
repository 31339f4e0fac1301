"""evals/device/llm_campaign.sh on the CPU (the interpreter; rounds are `untimed`): two calls with replies written
between them, each unpacked here as the lead does, exactly as on the GPU machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "evals" / "device" / "llm_campaign.sh"
HELPER = REPO / "evals" / "device" / "llm_campaign.py"


def _call(tmp: Path, out: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "OUT": str(tmp / out),
           "CAMPAIGN_DIR": str(tmp / "camp"), "WS": str(tmp / "ws"), "OPS": "gelu", "GPUS": "0", "WORKERS": "1",
           "ROUNDS": "3", "BUDGET_S": "500"}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _unpack(tmp: Path, out: str) -> str:
    done = subprocess.run([sys.executable, str(HELPER), "unpack", str(tmp / out / "campaign.tar.gz"), str(tmp / "camp")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_two_calls_advance_both_arms_one_round_each(tmp_path):
    first = _call(tmp_path, "out1")
    summary = first.stdout[first.stdout.index("== summary"):]
    assert "llm/full: 1 runs; 0 advanced a round, 1 started; 1 waiting for a reply" in summary
    assert "llm/none: 1 runs; 0 advanced a round, 1 started; 1 waiting for a reply" in summary
    assert "requests waiting for a reply: 2" in summary and "0 job(s) failed" in summary
    assert sorted(p.name for p in (tmp_path / "out1").iterdir()) == ["campaign.tar.gz", "log.txt", "report.json",
                                                                      "report.md"]
    with tarfile.open(tmp_path / "out1" / "campaign.tar.gz") as tar:
        names = tar.getnames()
    assert "store.tar.gz" in names and sum(n.endswith(".request.json") for n in names) == 2
    listing = _unpack(tmp_path, "out1")
    assert "2 request(s) to answer" in listing
    with tarfile.open(tmp_path / "camp" / "store.tar.gz") as tar:  # the store, without the runs' scratch files
        assert not [n for n in tar.getnames() if "/work/" in n or "/best/" in n]

    # the repliers: a usable kernel for the full arm, a reply without code for the other
    source = (REPO / "evals" / "suite" / "gelu.py").read_text()
    for request in (tmp_path / "camp" / "exchange").glob("*.request.json"):
        body = json.loads(request.read_text())
        reply = request.with_name(f"{body['id']}.reply.md")
        if body["context"]["grounding"] == "full":
            reply.write_text("model: test-replier\nChange: BLOCK 2048\n```python\n"
                             + source.replace("BLOCK=1024", "BLOCK=2048") + "```\n")
        else:
            reply.write_text("model: test-replier\nNo code this time.\n")

    second = _call(tmp_path, "out2")
    summary = second.stdout[second.stdout.index("== summary"):]
    assert "llm/full: 1 runs; 1 advanced a round, 0 started; 1 waiting for a reply" in summary
    assert "llm/none: 1 runs; 1 advanced a round, 0 started; 1 waiting for a reply" in summary
    report = json.loads((tmp_path / "out2" / "report.json").read_text())
    assert report["arms"]["llm/full"]["results"][0]["outcomes"] == {"untimed": 1}
    assert report["arms"]["llm/none"]["summary"]["reasons"] == {"unparsable": 1}
    assert "| unparsable reply | 0 (0%) | 1 (100%) |" in (tmp_path / "out2" / "report.md").read_text()
    listing = _unpack(tmp_path, "out2")
    assert "llm/full gelu round 2: to answer" in listing and "2 request(s) to answer, 2 pending in all" in listing
    assert len(list((tmp_path / "camp" / "exchange").glob("*.consumed.json"))) == 2  # each reply used once
