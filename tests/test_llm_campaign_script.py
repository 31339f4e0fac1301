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


@pytest.mark.slow
def test_arms_that_are_campaigns_each_run_with_their_own_kopt_home(tmp_path):
    """The held-out payoff's arms (evals/device/llm_heldout.sh): two campaigns of the `full` arm in one store, told
    apart by their KOPT_HOME; the synthesized patterns of one home reach its prompts and only its."""
    import yaml

    probes = tmp_path / "homes" / "heldout-synth" / "patterns"
    probes.mkdir(parents=True)
    for path in sorted((REPO / "corpora" / "patterns").glob("*.yaml")):  # every curated pattern, as a proven llm_ one
        data = yaml.safe_load(path.read_text())
        data.update(id=f"llm_probe_{data['id']}", stats={"tries": 9, "wins": 9, "speedups": [2.0] * 9},
                    provenance={"kind": "synthesized", "rounds": ["probe:1"]})
        (probes / f"llm_probe_{path.stem}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "OUT": str(tmp_path / "out"),
           "CAMPAIGN_DIR": str(tmp_path / "camp"), "WS": str(tmp_path / "ws"), "OPS": "gelu", "GPUS": "0",
           "WORKERS": "1", "ROUNDS": "2", "BUDGET_S": "500", "HOMES_DIR": str(tmp_path / "homes"),
           "ARMS": "heldout-synth/full heldout-curated/full"}
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout[done.stdout.index("== summary"):]
    for arm in ("heldout-synth/full", "heldout-curated/full"):
        assert f"{arm}: 1 runs; 0 advanced a round, 1 started; 1 waiting for a reply" in summary
    assert "requests waiting for a reply: 2" in summary and "0 job(s) failed" in summary
    assert set(json.loads((tmp_path / "out" / "report.json").read_text())["arms"]) == {"heldout-synth/full",
                                                                                       "heldout-curated/full"}
    state = json.loads(subprocess.run([sys.executable, str(HELPER), "state", str(tmp_path / "ws")], check=True,
                                      capture_output=True, text=True).stdout)
    prompts = {}
    for request in (tmp_path / "ws" / "exchange").glob("*.request.json"):
        body = json.loads(request.read_text())
        prompts[state[body["context"]["run_id"]]["campaign"]] = request.with_name(f"{body['id']}.request.md").read_text()
    assert "known pattern llm_probe_" in prompts["heldout-synth"]
    assert "known pattern llm_probe_" not in prompts["heldout-curated"] and "known pattern " in prompts["heldout-curated"]
