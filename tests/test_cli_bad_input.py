"""Bad input a new user types, through a real `kopt` subprocess: one clear line naming the file or
cause, a non-zero exit, nothing on stdout, never a traceback. Each case was a bug once."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "strided_scale.py"


def kopt(args, tmp_path, timeout=120, **extra_env):
    env = {**os.environ, "KOPT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1", **extra_env}
    env.pop("KOPT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "kopt.cli", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=timeout)


def assert_one_line_error(done, *words):
    """A KoptError: exit 1, stdout empty, one stderr line that says what is wrong."""
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert done.stdout == ""
    err = done.stderr.strip()
    assert "\n" not in err and err.startswith("kopt: error: ") and "internal error" not in err, err
    for word in words:
        assert word in err, err


def assert_usage_error(done, *words):
    """click's own check of an option or argument: exit 2 and its message, no traceback."""
    assert done.returncode == 2, (done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.fixture
def bad(tmp_path):
    (tmp_path / "adir").mkdir()
    (tmp_path / "notes.txt").write_text("hello\n")
    return tmp_path


def test_task_file_without_py_suffix(bad):
    """A task saved under another suffix imports; a text file is an import error at its line, not a crash."""
    task = bad / "strided.task"
    shutil.copy(EXAMPLE, task)
    done = kopt(["compile", str(task), "--stage", "ttir", "--json"], bad)
    assert done.returncode == 0 and '"name": "scale_rows_kernel"' in done.stdout, done.stderr[-2000:]
    for command in ("compile", "diagnose"):
        assert_one_line_error(kopt([command, "notes.txt"], bad), "notes.txt:1", "importing the task failed",
                              "NameError")


def test_directory_is_named_a_directory(bad):
    assert_one_line_error(kopt(["ask", "why", "--kernel", "adir", "--offline"], bad), "adir: is a directory")
    assert_usage_error(kopt(["diagnose", "adir"], bad), "is a directory")


def test_ask_kernel_line_must_be_a_line_of_the_file(bad):
    not_a_number = kopt(["ask", "why", "--kernel", f"{EXAMPLE}:abc", "--offline"], bad)
    assert_one_line_error(not_a_number, "'abc' is not a line number")
    past_the_end = kopt(["ask", "why", "--kernel", f"{EXAMPLE}:9999", "--offline"], bad)
    assert_one_line_error(past_the_end, "strided_scale.py:9999: no such line")


def test_unknown_targets_fail_in_one_line(bad):
    """sm_7 used to reach ptxas and LLVM (a page of errors); bogus targets were silently the default."""
    assert_one_line_error(kopt(["compile", str(EXAMPLE), "--target", "sm_7"], bad), "unknown target 'sm_7'", "sm_90")
    assert_one_line_error(kopt(["ask", "why", "--target", "bogus", "--offline"], bad), "unknown target 'bogus'")
    assert_one_line_error(kopt(["validate", str(EXAMPLE), "--target", "bogus"], bad), "unknown target 'bogus'")


def test_option_ranges_are_checked_up_front(bad):
    assert_usage_error(kopt(["validate", str(EXAMPLE), "--timeout", "-1"], bad), "--timeout")
    assert_usage_error(kopt(["mcp", "--transport", "http", "--port", "99999"], bad), "--port")
    assert_usage_error(kopt(["eval", "retrieval", "--gold", "adir"], bad), "is a directory")
    (bad / "taken").write_text("")
    assert_usage_error(kopt(["synthesize", "--out", "taken", "--no-index"], bad), "is a file")


def test_empty_suite_and_missing_task_print_nothing_else(bad):
    assert_one_line_error(kopt(["eval", "suite", "--suite", "adir"], bad), "adir: no operators")
    # the live rounds table used to be drawn, empty, before the error
    assert_one_line_error(kopt(["optimize", "missing.py"], bad), "missing.py: no such task file")


def test_eval_diagnosis_manifest_that_is_not_one(bad):
    (bad / "empty.yaml").write_text("")
    assert_one_line_error(kopt(["eval", "diagnosis", "--manifest", "empty.yaml"], bad),
                          "empty.yaml: not a diagnosis manifest")
    assert_one_line_error(kopt(["eval", "diagnosis", "--manifest", "missing.yaml"], bad),
                          "missing.yaml: cannot read the manifest")


def test_ingest_path_must_be_a_folder(bad):
    assert_usage_error(kopt(["ingest", "triton", "--path", "notes.txt"], bad), "is a file")


def test_index_doctor_on_an_unreadable_catalog_says_what_to_do(bad):
    """The index's own error says "run kopt index doctor"; the doctor must not answer the same."""
    catalog = bad / "home" / "index" / "catalog.json"
    catalog.parent.mkdir(parents=True)
    catalog.write_text("{garbage")
    done = kopt(["index", "doctor"], bad)
    assert_one_line_error(done, "catalog.json: unreadable index catalog", "move it aside", "kopt ingest")
    assert catalog.read_text() == "{garbage"  # nothing is changed behind the user's back


def test_ask_keeps_the_evidence_when_the_llm_is_unreachable(bad):
    """An LLM that cannot be reached used to turn the whole answer into one error line."""
    done = kopt(["ask", "why no vectorization", "--kernel", f"{EXAMPLE}:15"], bad, KOPT_LLM_PROVIDER="openai-like",
                KOPT_LLM_MODEL="x", KOPT_LLM_BASE_URL="http://127.0.0.1:1/v1", KOPT_LLM_TIMEOUT_S="5")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Facts at the line" in done.stdout and "the LLM (x) failed" in done.stdout and "--offline" in done.stdout


def test_settings_of_the_wrong_type_name_the_setting_and_where_it_came_from(tmp_path):
    (tmp_path / "kopt.toml").write_text("target = 90\n")
    assert_one_line_error(kopt(["compile", str(EXAMPLE)], tmp_path), "'target'", "kopt.toml", "string")
    (tmp_path / "kopt.toml").unlink()
    done = kopt(["compile", str(EXAMPLE)], tmp_path, KOPT_LLM_TIMEOUT_S="abc")
    assert_one_line_error(done, "'llm_timeout_s'", "environment", "not a number")


def test_debug_anywhere_on_the_line_shows_the_traceback(tmp_path):
    quiet = kopt(["compile", str(tmp_path / "missing.py")], tmp_path)
    assert_one_line_error(quiet, "missing.py")
    loud = kopt(["compile", str(tmp_path / "missing.py"), "--debug"], tmp_path)
    assert loud.returncode == 1 and "Traceback" in loud.stderr and "missing.py" in loud.stderr


def _with(source: str, before: str, insert: str) -> str:
    """The example with `insert` placed before the line starting with `before` (or that line replaced by it)."""
    assert before in source
    return source.replace(before, insert + before, 1)


def _broken_tasks(folder: Path) -> dict[str, tuple[str, ...]]:
    """file name -> words its one-line error must say."""
    source = EXAMPLE.read_text()
    files = {
        "latin1.py": (source.replace("# ", "# caf\xe9 ", 1).encode("latin-1"), ("latin1.py:", "not UTF-8")),
        "empty.py": (b"\n  \n", ("empty.py", "is empty")),
        "binary.py": (bytes(range(256)) * 4, ("binary.py", "binary file")),
        "tol_int.py": (_with(source, "CASES = [", "TOLERANCES = 5\n"), ("tol_int.py:", "TOLERANCES must be a dict", "int")),
        "tol_pair.py": (_with(source, "CASES = [", 'TOLERANCES = {"float32": 1e-3}\n'),
                        ("tol_pair.py:", "TOLERANCES", "'float32': 0.001 is not")),
        "tol_text.py": (_with(source, "CASES = [", 'TOLERANCES = {"float32": (1e-3, "tight")}\n'),
                        ("tol_text.py:", "TOLERANCES", "tight")),
        "cases_ints.py": (source + "\nCASES = [{1}, {2}, {3}, {4}, {5}]\n", ("cases_ints.py:", "CASES must be a list of cases",
                                                                    "entry 0 is set")),
        "cases_dict.py": (source + "\nCASES = {'rows': 3}\n", ("cases_dict.py:", "CASES must be a list", "got dict")),
        "no_reference.py": (source.replace("def reference(", "def reference_(", 1), ("missing reference",)),
        "no_entry.py": (source.replace("def entry(", "def entry_(", 1), ("missing entry",)),
        "flops_number.py": (source + "\nflops = 12\n", ("flops_number.py:", "flops must be a function")),
        "raises.py": (b"import os\nraise RuntimeError('no GPU here')\n", ("raises.py:2", "importing the task failed",
                                                                          "RuntimeError: no GPU here")),
    }
    for name, (content, _) in files.items():
        data = content if isinstance(content, bytes) else content.encode()
        (folder / name).write_bytes(data)
    return {name: words for name, (_, words) in files.items()}


def test_broken_task_files_are_one_line_each(bad):
    """Each used to be an `internal error` (UnicodeDecodeError, TypeError deep in validation) or a crashed
    child; now the loader names the file (and line) and what is wrong, in the CLI and in the sandbox child."""
    for name, words in _broken_tasks(bad).items():
        assert_one_line_error(kopt(["compile", name, "--stage", "ttir"], bad), *words)
    for name in ("latin1.py", "binary.py", "empty.py"):  # L1 reads the source itself, before any import
        assert_one_line_error(kopt(["diagnose", name, "--no-gpu"], bad), *_broken_tasks(bad)[name])
    for name in ("latin1.py", "tol_pair.py"):  # the sandboxed validate child reports the same line
        assert_one_line_error(kopt(["validate", name], bad), *_broken_tasks(bad)[name])


def test_mcp_options_are_checked_before_serving(bad):
    assert_one_line_error(kopt(["mcp", "--tool-timeout", "nope=3"], bad), "unknown tool 'nope'")
    assert_one_line_error(kopt(["mcp", "--tool-timeout", "search=-1"], bad), "seconds > 0")
    assert_one_line_error(kopt(["mcp", "--transport", "http", "--host", "example.com"], bad),
                          "not a loopback address", "--token")
