"""The per-case regression guard: a candidate faster in geomean but slower beyond noise on any case is no win
(the col_sum campaign accepted a kernel 1.8x slower on two of five cases). `judge` is the one rule the loop
and MCP record_round share."""

from kopt.optimize import CASE_NOISE, MIN_GAIN, Timing, Validated, judge

OK = Validated(True, cases=5)
CASES = [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}]


def timed(times):
    return Timing(True, times, [None] * len(times), CASES)


def test_a_geomean_win_that_slows_one_case_is_not_improved_and_names_the_case():
    base = [1.0] * 5
    outcome, message = judge(None, OK, timed([0.5, 0.5, 0.5, 0.5, 1.8]), None, base)
    assert outcome == "slower"
    assert "slower beyond noise on 1 of 5 cases: case {'n': 5} x0.56" in message and "dispatches by shape" in message
    assert message.startswith("x1.5")  # the geomean is still reported


def test_case_noise_is_tolerated_and_a_clean_win_is_improved():
    base = [1.0] * 5
    within = 1.0 * CASE_NOISE * 0.99
    assert judge(None, OK, timed([0.5, 0.5, 0.5, 0.5, within]), None, base)[0] == "improved"
    assert judge(None, OK, timed([0.5] * 5), None, base) == ("improved", "x2.000 vs the best so far")
    assert judge(None, OK, timed([1.0 / MIN_GAIN * 1.001] * 5), None, base)[0] == "slower"


def test_cases_without_a_base_time_are_not_judged():
    outcome, _ = judge(None, OK, timed([0.5, 0.5, 0.5, 0.5, 9.0]), None, [1.0, 1.0, 1.0, 1.0, None])
    assert outcome == "improved"
