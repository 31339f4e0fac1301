"""Where a task's run lives and what it can import: .kopt/ in the task's workspace (not the current folder),
sibling modules found from a working copy elsewhere (KOPT_TASK_PATH), optimize --json with the initial kernel's
per-case record, and held-out shapes planned for timing."""

import os
from pathlib import Path

import pytest
import torch

from kopt.errors import KoptError, TaskError
from kopt.harness.bench import bench, final_check_plan
from kopt.task import TASK_PATH_ENV, load_task, task_import_path, task_workspace

ROOT = Path(__file__).resolve().parents[1]
VECTOR_ADD = ROOT / "tests" / "redteam" / "tasks" / "vector_add.py"


def test_the_workspace_is_the_nearest_folder_with_kopt_toml_or_a_repository_root(tmp_path):
    task = tmp_path / "repo" / "kernels" / "deep" / "t.py"
    task.parent.mkdir(parents=True)
    task.write_text("")
    (tmp_path / ".kopt").mkdir()  # a stray store higher up is no workspace
    assert task_workspace(task) == task.parent  # nothing above: the task's own folder
    (tmp_path / "repo" / ".git").mkdir()
    assert task_workspace(task) == tmp_path / "repo"
    (task.parent.parent / "kopt.toml").write_text("")
    assert task_workspace(task) == task.parent.parent


def test_optimize_keeps_its_store_in_the_tasks_workspace_and_reports_the_initial_cases(tmp_path, monkeypatch):
    from kopt.optimize import optimize

    work = tmp_path / "ws"
    work.mkdir()
    (work / "kopt.toml").write_text("")
    task = work / "kernels" / "vector_add.py"
    task.parent.mkdir()
    task.write_text(VECTOR_ADD.read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv(TASK_PATH_ENV, raising=False)
    summary = optimize(task, minutes=1e-9, proposer="recipes")  # validates the initial kernel, then stops
    assert (work / ".kopt" / "rounds.sqlite").is_file() and not (elsewhere / ".kopt").exists()
    assert summary["stop_reason"].startswith("time budget spent") and summary["workspace"] == str(work)
    assert [c["case"] for c in summary["initial"]] == load_task(task).cases
    assert all("ms" in c for c in summary["initial"])  # the initial times (None: no GPU here)
    assert TASK_PATH_ENV not in os.environ  # set only while the run's rounds ran


def test_a_working_copy_elsewhere_imports_the_tasks_siblings_while_a_run_holds_its_path(tmp_path, monkeypatch):
    home = tmp_path / "task_home"
    (home / "siblingpkg_ws").mkdir(parents=True)
    (home / "siblingpkg_ws" / "__init__.py").write_text("SCALE = 2.0\n")
    source = VECTOR_ADD.read_text().replace("import torch\n", "import torch\nfrom siblingpkg_ws import SCALE\n", 1)
    copy = tmp_path / "work" / "current.py"
    copy.parent.mkdir()
    copy.write_text(source)
    monkeypatch.delenv(TASK_PATH_ENV, raising=False)
    with pytest.raises(TaskError, match="No module named 'siblingpkg_ws'"):
        load_task(copy)
    with task_import_path(home / "task.py"):  # what the optimizer wraps its rounds in
        assert load_task(copy).module.SCALE == 2.0
    assert TASK_PATH_ENV not in os.environ


def test_held_out_shapes_are_planned_for_timing():
    task = load_task(VECTOR_ADD)
    plan = final_check_plan(task, None, 100, held_out=True)
    assert [p["case"] for p in plan] == task.held_out and all(p["held_out"] for p in plan)
    cases_seeds = {s for p in final_check_plan(task, None, 100) for s in p["seeds"]}
    assert not cases_seeds & {s for p in plan for s in p["seeds"]}  # their own fresh inputs
    with pytest.raises(TaskError, match="no HELD_OUT entry 5"):
        final_check_plan(task, [5], 100, held_out=True)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU answer")
def test_timing_held_out_shapes_needs_a_gpu_and_says_so():
    with pytest.raises(KoptError, match="needs a CUDA GPU"):
        bench(VECTOR_ADD, held_out=True, timeout_s=300)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_held_out_shapes_are_timed_on_the_gpu():
    result = bench(VECTOR_ADD, held_out=True, timeout_s=600)
    assert result.ok, result.message
    assert [c.case for c in result.cases] == load_task(VECTOR_ADD).held_out and all(c.kernel_ms > 0 for c in result.cases)
