"""judge: the one outcome rule shared by the optimize loop and MCP record_round, stage by stage."""
from kopt.optimize import judge

OK = {"ok": True, "reason": None, "message": None, "cases": 3}
BASE = [2.0, 4.0]


def test_each_stage_decides_in_order():
    assert judge("edits the reference", OK, None, "", BASE) == ("rejected",
                                                                 "candidate rejected: edits the reference")
    bad = dict(OK, ok=False, reason="cuda_error", message="illegal address")
    assert judge(None, bad, None, "", BASE) == ("crash", "illegal address")
    assert judge(None, dict(bad, reason="incorrect"), None, "", BASE)[0] == "incorrect"
    assert judge(None, OK, None, "no CUDA GPU", BASE) == ("untimed", "validated on 3 cases; no CUDA GPU")
    failed = {"ok": False, "outcome": "timeout", "message": "bench ran past 600 s", "times": [], "roofline": []}
    assert judge(None, OK, failed, "", BASE) == ("timeout", "bench ran past 600 s")


def test_a_gain_counts_only_past_the_noise_margin():
    faster = {"ok": True, "times": [1.0, 2.0], "roofline": [0.5, 0.5]}
    assert judge(None, OK, faster, "", BASE) == ("improved", "x2.000 vs the best so far")
    level = {"ok": True, "times": [1.99, 3.98], "roofline": [0.5, 0.5]}
    assert judge(None, OK, level, "", BASE) == ("slower", "x1.005 vs the best so far (not faster)")
