"""Bench's bookkeeping, which runs on the GPU machine but is plain Python: splitting profiler events
into calls and placing a time on the roofline."""

from types import SimpleNamespace

from kopt.harness.bench import CaseTiming, _median, _place_on_roofline, _split_calls

FLUSH = "at::native::FillFunctor<unsigned char>"


def test_calls_start_at_each_flush_and_sum_everything_the_entry_launched():
    events = [(0, 900, FLUSH), (1000, 50_000, "add_kernel"), (60_000, 2_000, "Memset (Device)"),
              (70_000, 900, FLUSH), (71_000, 40_000, "add_kernel"), (120_000, 10_000, "add_kernel")]
    calls = _split_calls(events, {FLUSH})
    assert calls == [{"add_kernel": 0.05, "Memset (Device)": 0.002}, {"add_kernel": 0.05}]


def test_events_before_the_first_flush_are_ignored():
    assert _split_calls([(0, 10, "stray"), (5, 1, FLUSH), (6, 1_000_000, "k")], {FLUSH}) == [{"k": 1.0}]


def test_roofline_picks_the_binding_resource():
    ceilings = {"copy_gbps": 4000.0, "matmul_tflops": {"fp16": 800.0, "fp32": 50.0}}
    memory_task = SimpleNamespace(bytes_moved=lambda c: 4_000_000_000, flops=lambda c: 1_000_000_000, dtype_flops=None)
    timing = CaseTiming(case={}, kernel_ms=2.0, kernel_ms_min=2.0, kernel_ms_p90=2.0, event_ms=2.1, runs=25, input_sets=2)
    _place_on_roofline(timing, memory_task, {}, ceilings)
    assert timing.bound == "memory" and abs(timing.roofline_fraction - 0.5) < 1e-9 and abs(timing.gbps - 2000) < 1e-6
    matmul_task = SimpleNamespace(bytes_moved=lambda c: 100_000_000, flops=lambda c: 2 * 4096**3, dtype_flops="fp16")
    timing = CaseTiming(case={}, kernel_ms=0.4, kernel_ms_min=0.4, kernel_ms_p90=0.4, event_ms=0.5, runs=25, input_sets=2)
    _place_on_roofline(timing, matmul_task, {}, ceilings)
    assert timing.bound == "compute" and 0.42 < timing.roofline_fraction < 0.44 and 340 < timing.tflops < 345


def test_median():
    assert _median([3.0, 1.0, 2.0]) == 2.0 and _median([4.0, 1.0, 2.0, 3.0]) == 2.5
