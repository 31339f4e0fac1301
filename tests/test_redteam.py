"""Red team: hostile candidates (tests/redteam/candidates) through the real validate() on the Triton
interpreter. Each file's docstring says its task, what validate() must answer (`expect:`) and what the
dynamic layer alone answers with the static check switched off (`dynamic:`; `skip` where only the static
check, or bench's kernel attribution on a GPU, can see the cheat). None may be accepted, the parent never
raises, and every rejection names a reason; the legit rewrites must be accepted."""

import os
import re
from pathlib import Path

import pytest
import torch

import kopt.harness.integrity
from kopt.harness.bench import foreign_share
from kopt.harness.integrity import check_source
from kopt.harness.validate import validate
from kopt.optimize import judge, validation_summary

REDTEAM = Path(__file__).resolve().parent / "redteam"
CANDIDATES = sorted((REDTEAM / "candidates").glob("*.py"))
SEED = 7
# one hostile file per dynamic defence (no launch, reference elsewhere, parent-side compare, output counting,
# two calls per shape, poisoning); KOPT_REDTEAM_ALL=1 runs every file's `dynamic:` claim
DYNAMIC_SAMPLE = {"returns_torch_result", "calls_reference", "rewrites_reference_code", "patches_tensor_any",
                  "stale_buffer_view",
                  "patches_kopt_compare", "forges_result_file_and_exits", "raises_system_exit", "caches_by_shape",
                  "lru_cache_entry", "reads_expected_files", "imports_task_module", "try_fallback",
                  "row_sum_torch_method"}


def header(path: Path) -> dict[str, str]:
    return dict(re.findall(r"^(task|expect|dynamic): (\S+)$", path.read_text(), re.M))


def check(result, expected: str, path: Path) -> None:
    """`expected` is accept, a reason, or reason/cheat-code."""
    if expected == "accept":
        assert result.ok, f"{path.name}: {result.reason}: {result.message}"
        assert result.cases and all(c.ok for c in result.cases)
        return
    assert not result.ok, f"{path.name} was accepted"
    assert result.reason and result.message, f"{path.name}: a rejection without a reason"
    reason, _, code = expected.partition("/")
    assert result.reason == reason, f"{path.name}: {result.reason} ({result.cheat}): {result.message}"
    if code:
        assert result.cheat == code, f"{path.name}: {result.cheat}: {result.message}"


def test_the_suite_is_big_enough_and_has_legit_rewrites():
    hostile = [p for p in CANDIDATES if header(p)["expect"] != "accept"]
    assert len(hostile) >= 30 and len(CANDIDATES) - len(hostile) >= 3
    assert {header(p)["task"] for p in CANDIDATES} == {"vector_add", "row_sum"}


def test_the_static_check_flags_no_legit_kernel_file():
    root = REDTEAM.parents[1]
    legit = [*root.glob("evals/suite/*.py"), *root.glob("evals/diagnosis/*.py"), *root.glob("examples/*.py")]
    assert len(legit) > 80
    found = {p.name: check_source(p.read_text(), str(p)) for p in legit}
    assert {name: v[0].message for name, v in found.items() if v} == {}


def test_tma_descriptors_are_launch_plumbing_but_the_rest_of_triton_tools_is_not():
    tma = "from triton.tools.tensor_descriptor import TensorDescriptor\n\ndef entry(x):\n" \
          "    return TensorDescriptor.from_tensor(x, [64, 64])\n"
    assert check_source(tma, "tma.py") == []
    for hidden in ("from triton.tools import disasm\n", "import triton.tools.disasm\n",
                   "import triton\n\ndef entry(x):\n    return triton.tools.disasm\n"):
        (violation,) = check_source(hidden, "hidden.py")[:1]
        assert violation.code in ("denied_import", "monkeypatch"), hidden


def test_a_python_set_built_in_the_function_may_add_but_a_rebound_one_may_not():
    head = "import torch\nimport triton\n\n"
    legit = head + ("def _configs(configs):\n    seen, kept = set(), []\n    seen = set()\n    for c in configs:\n"
                    "        if c in seen:\n            continue\n        seen.add(c)\n    return seen\n\n"
                    "def entry(x):\n    return _configs([1, 2])\n")
    assert check_source(legit, "legit.py") == []
    rebound = head + "def entry(x, y):\n    acc = set()\n    acc = x\n    return acc.add(y)\n"
    assert [v.code for v in check_source(rebound, "rebound.py")] == ["torch_compute"]
    looped = head + "def entry(xs, y):\n    acc = set()\n    for acc in xs:\n        acc.add(y)\n    return y\n"
    assert "torch_compute" in [v.code for v in check_source(looped, "looped.py")]


@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_validate_rejects_every_cheat_and_accepts_legit_rewrites(path):
    h = header(path)
    result = validate(REDTEAM / "tasks" / f"{h['task']}.py", path, seed=SEED, timeout_s=240)
    check(result, h["expect"], path)


DYNAMIC = [p for p in CANDIDATES if header(p)["dynamic"] != "skip" and check_source(p.read_text(), str(p))
           and (os.environ.get("KOPT_REDTEAM_ALL") or p.stem in DYNAMIC_SAMPLE)]


@pytest.mark.parametrize("path", DYNAMIC, ids=lambda p: p.stem)
def test_the_dynamic_layer_alone_still_rejects(path, monkeypatch):
    """Static check off: the separate reference process, the parent's own comparison and counting, two
    calls per shape and the launch log must still catch what the static check caught first."""
    monkeypatch.setattr(kopt.harness.integrity, "check_file", lambda *a, **k: None)
    h = header(path)
    result = validate(REDTEAM / "tasks" / f"{h['task']}.py", path, seed=SEED, timeout_s=240)
    check(result, h["dynamic"], path)


def test_a_cheat_is_recorded_as_a_rejected_round_never_validated():
    path = REDTEAM / "candidates" / "returns_torch_result.py"
    result = validate(REDTEAM / "tasks" / "vector_add.py", path)
    outcome, message = judge(None, validation_summary(result), None, "no GPU", [])
    assert outcome == "rejected" and "tensor_op" in message and f"{path}:" in message


def test_kernel_time_attribution_tells_triton_from_torch_kernels():
    kernels = {"add_kernel": 0.2, "void at::native::vectorized_elementwise_kernel<4, add>": 0.7,
               "Memcpy DtoD (Device -> Device)": 0.5}
    share, worst = foreign_share(kernels, {"add_kernel"})
    assert share == pytest.approx(0.7 / 1.4) and worst.startswith("void at::native")
    assert foreign_share({"add_kernel": 1.0, "Memset (Device)": 3.0}, {"add_kernel"}) == (0.0, None)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bench_rejects_a_token_kernel_beside_torch_work(monkeypatch):
    from kopt.harness.bench import bench

    monkeypatch.setattr(kopt.harness.integrity, "check_file", lambda *a, **k: None)
    result = bench(REDTEAM / "tasks" / "vector_add.py", REDTEAM / "candidates" / "token_kernel_then_torch.py",
                   cases=[0], timeout_s=600)
    assert not result.ok and result.reason == "cheat" and result.cheat == "foreign_kernels", result.message


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bench_times_a_legit_rewrite():
    from kopt.harness.bench import bench

    result = bench(REDTEAM / "tasks" / "vector_add.py", REDTEAM / "candidates" / "legit_vector_add_wide_blocks.py",
                   cases=[0], timeout_s=600)
    assert result.ok, result.message
    assert result.cases[0].kernel_ms > 0 and "add_kernel" in result.cases[0].triton_kernels
