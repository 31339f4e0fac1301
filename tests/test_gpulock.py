"""The per-GPU measurement lock: real processes, real flock; measured sections never overlap."""

import fcntl
import os
import subprocess
import sys

import pytest

from kopt.harness import gpulock

HOLD = """
import time
from kopt.harness.gpulock import measuring
with measuring():
    start = time.time()
    time.sleep(0.4)
    print(start, time.time())
"""


def _intervals(env: dict, n: int) -> list[tuple[float, float]]:
    procs = [subprocess.Popen([sys.executable, "-c", HOLD], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    return sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)


def test_measured_sections_take_turns(tmp_path):
    env = {**os.environ, gpulock.ENV: str(tmp_path / "gpu0.lock")}
    spans = _intervals(env, 3)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end - 0.01, f"sections overlap: {spans}"


def test_without_the_variable_nothing_waits():
    env = {k: v for k, v in os.environ.items() if k != gpulock.ENV}
    spans = _intervals(env, 3)
    assert max(s for s, _ in spans) < min(e for _, e in spans), f"expected overlapping sections: {spans}"


def test_lock_is_released_when_the_section_raises(tmp_path, monkeypatch):
    lock = tmp_path / "gpu0.lock"
    monkeypatch.setenv(gpulock.ENV, str(lock))
    with pytest.raises(ValueError), gpulock.measuring():
        raise ValueError("candidate crashed")
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if still held
