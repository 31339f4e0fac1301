"""judge: the one outcome rule shared by the optimize loop and MCP record_round, stage by stage."""
from kopt.optimize import Timing, Validated, judge
from kopt.vocabulary import Outcome

OK = Validated(True, cases=3)
BASE = [2.0, 4.0]


def test_each_stage_decides_in_order():
    assert judge("edits the reference", OK, None, "", BASE) == ("rejected",
                                                                 "candidate rejected: edits the reference")
    bad = Validated(False, "cuda_error", "illegal address", 3)
    assert judge(None, bad, None, "", BASE) == ("crash", "illegal address")
    assert judge(None, Validated(False, "incorrect", "wrong", 3), None, "", BASE)[0] == "incorrect"
    assert judge(None, OK, None, "no CUDA GPU", BASE) == ("untimed", "validated on 3 cases; no CUDA GPU")
    failed = Timing(False, outcome=Outcome.TIMEOUT, message="bench ran past 600 s")
    assert judge(None, OK, failed, "", BASE) == ("timeout", "bench ran past 600 s")


def test_a_gain_counts_only_past_the_noise_margin():
    faster = Timing(True, [1.0, 2.0], [0.5, 0.5])
    assert judge(None, OK, faster, "", BASE) == ("improved", "x2.000 vs the best so far")
    level = Timing(True, [1.99, 3.98], [0.5, 0.5])
    assert judge(None, OK, level, "", BASE) == ("slower", "x1.005 vs the best so far (not faster)")
