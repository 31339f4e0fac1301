"""Every test session runs isolated from the user's settings: its own KOPT_HOME, an empty user config folder,
a temporary working directory (so no kopt.toml is read) and no KOPT_* variables. The Ascend toolchain (set up once
by `make test` under the real KOPT_HOME) is shared through a link.
`llm_server` starts loopback OpenAI-compatible servers that replay chat-completion replies.
`triton_src` / `triton_ascend_src` are the compiler checkouts the eval_data tests read (`make eval-data`)."""

import fcntl
import json
import os
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kopt.config import kopt_home


def _env_path(name: str) -> Path | None:
    """`make eval-data TRITON_SRC=DIR`; KOPT_TRITON_SRC, which `kopt ingest triton` reads, names one too."""
    value = os.environ.get(name) or os.environ.get(f"KOPT_{name}")
    return Path(value).expanduser().resolve() if value else None


CHECKOUTS = {name: _env_path(name) for name in ("TRITON_SRC", "TRITON_ASCEND_SRC")}  # before the session clears KOPT_*


# The `slow` tests, which `make test-fast` leaves out: an index build, a Triton compile, a kopt CLI child (it
# imports torch), interpreter runs or a toolchain. Chosen from `pytest --durations` on the shared 2-core CPU
# machine (>= 2.5 s a test there); a whole module, or module::test with all its parameters. Listed here, not as
# decorators, so that no test file has to change to move a test between the tiers.
SLOW = {
    # whole modules: every test (or the module's shared fixture) compiles, builds an index or runs the CLI
    "test_ascend.py", "test_ascend_diagnose.py", "test_ask.py", "test_diagnose_cli.py", "test_diagnosis_cases.py",
    "test_harness_cli.py", "test_harness_compile.py", "test_harness_flush.py",
    "test_index_concurrency.py", "test_index_retrieval.py", "test_ingest_building.py", "test_ingest_toolchain.py",
    "test_l3_attribution.py", "test_llm_exchange.py", "test_llm_proposer.py", "test_llm_rerank.py", "test_mcp_fuzz.py",
    "test_mcp_server.py", "test_suite_ops.py", "test_train.py",
    "test_compile_worker.py", "test_worker_concurrency.py",  # a warm worker process each; an index and a pool of 4
    "test_grounded_prompt.py", "test_compile_env.py",  # real diagnoses through Triton's sm_90 compiler; sandboxed compiles
    # single tests in otherwise fast modules
    "test_campaign.py::test_campaign_resumes_after_kill_9",
    "test_campaign.py::test_campaign_script_runs_phases_side_by_side_and_reports",
    "test_campaign.py::test_ray_sends_the_same_jobs_to_a_local_cluster",
    "test_cli_bad_input.py::test_ask_keeps_the_evidence_when_the_llm_is_unreachable",
    "test_cli_bad_input.py::test_broken_task_files_are_one_line_each",
    "test_cli_bad_input.py::test_mcp_options_are_checked_before_serving",
    "test_cli_bad_input.py::test_task_file_without_py_suffix",
    "test_cli_bad_input.py::test_unknown_targets_fail_in_one_line",
    "test_cli_grammar.py::test_a_failed_validation_under_json_is_one_document_with_the_error",
    "test_cli_grammar.py::test_doctor_lists_what_kopt_runs_with",
    "test_cli_grammar.py::test_json_output_is_one_object_with_schema",
    "test_config.py::test_cli_never_sends_the_users_key_to_the_workspaces_url",
    "test_containment.py::test_a_flood_of_output_is_capped_and_costs_the_parent_little_memory",
    "test_containment.py::test_a_memory_hog_is_stopped_with_reason_oom",
    "test_containment.py::test_a_timeout_kills_the_whole_tree_and_reraises",
    "test_containment.py::test_kopt_validate_json_says_which_sandbox_ran",
    "test_diagnose_report.py::test_report_of_the_example_reads_at_the_terminal_width",
    "test_diagnosis_mechanisms.py::test_the_fixtures_compute_what_they_claim_in_the_interpreter",
    "test_doc_expansion.py::test_expansion_words_find_the_chunk_whose_text_and_citation_stay_its_own",
    "test_doc_expansion.py::test_the_catalog_records_the_pairs_and_other_pairs_make_a_new_build",
    "test_symbol_graph.py::test_a_query_naming_only_the_pass_flag_finds_its_implementation_through_the_graph",
    "test_escalate.py::test_compile_failure_is_a_finding",
    "test_escalate.py::test_goes_to_l3_then_l4_when_the_l3_hypothesis_failed",
    "test_eval_report_arms.py::test_an_arm_without_torch_references_uses_the_other_arms",
    "test_eval_report_arms.py::test_an_operator_left_out_leaves_every_figure_of_both_arms",
    "test_eval_report_arms.py::test_arms_can_be_the_groundings_of_one_campaign",
    "test_eval_report_arms.py::test_cli_compares_two_arms_as_markdown_and_json",
    "test_eval_report_arms.py::test_cli_says_which_arm_is_missing",
    "test_harness_validate.py::test_a_broken_task_file_raises_task_error_and_a_broken_candidate_fails",
    "test_harness_validate.py::test_a_candidate_that_ends_early_with_status_0_is_a_cheat_not_a_pass",
    "test_harness_validate.py::test_an_exception_in_candidate_code_names_its_line",
    "test_harness_validate.py::test_candidate_is_checked_against_the_tasks_reference",
    "test_harness_validate.py::test_examples_pass_on_the_interpreter",
    "test_harness_validate.py::test_interpreter_catches_a_planted_off_by_one",
    "test_harness_validate.py::test_kernelbench_modelnew_matches_model_with_copied_weights",
    "test_harness_validate.py::test_run_sandboxed_rejects_unknown_ops_without_raising",
    "test_harness_validate.py::test_sandbox_ends_a_hanging_kernel_within_its_limit",
    "test_harness_validate.py::test_sandbox_reports_a_segfault_as_a_crash",
    "test_ingest_chunking.py::test_numpy_query_embedding_matches_sentence_transformers",
    "test_l1.py::test_interpreter_runs_the_scalar_loop_fixture",
    "test_l3_readers.py::test_trajectory_names_the_passes_that_made_and_removed_conversions",
    "test_launch_facts.py::test_escalation_compiles_the_odd_case_and_confirms_its_narrow_accesses",
    "test_launch_facts.py::test_modulo_counts_only_on_per_element_offsets_of_the_vector_dim",
    "test_optimize.py::test_a_run_started_without_a_gpu_is_timed_when_resumed_on_one",
    "test_optimize.py::test_best_kernel_goes_into_a_folder_that_does_not_exist_yet",
    "test_optimize.py::test_cli_errors_are_one_line",
    "test_optimize.py::test_fastest_variant_that_fails_validation_loses_to_the_next",
    "test_optimize.py::test_llm_prompt_holds_the_per_case_times_and_roofline_from_round_1",
    "test_optimize.py::test_timed_loop_keeps_the_best_writes_it_and_reports",
    "test_optimize_interrupt.py::test_ctrl_c_marks_the_run_interrupted_and_more_adds_rounds",
    "test_passnotes.py::test_pipeline_order_matches_a_real_sm90_compile",
    "test_realkernels.py::test_the_converter_builds_a_task_that_validates_on_the_interpreter",
    "test_recipes.py::test_autotune_makes_the_grid_follow_the_config_and_compiles",
    "test_recipes.py::test_grouped_order_validates_through_the_interpreter",
    "test_recipes.py::test_hoist_and_int32_compose_and_validate",
    "test_recipes.py::test_persistent_grid_validates_through_the_interpreter",
    "test_redteam.py::test_the_dynamic_layer_alone_still_rejects",
    "test_redteam.py::test_validate_rejects_every_cheat_and_accepts_legit_rewrites",
    "test_retrieval_eval.py::test_cli_end_to_end_on_real_index",
    "test_retrieval_eval.py::test_cli_reports_bad_gold_in_one_line",
    "test_rounds_store.py::test_kill_9_mid_round_then_resume",
    "test_run_report.py::test_headless_chromium_renders_the_page",
    "test_synthesize.py::test_synthesized_pattern_is_upserted_into_the_patterns_collection",
    "test_synthesize_llm.py::test_diagnosing_the_parents_adds_what_only_the_compiled_ir_shows",
    "test_task.py::test_cli_reports_a_bad_task_in_one_line_and_exit_1",
    "test_task_autotune.py::test_an_autotuned_heuristics_kernel_validates_on_the_interpreter",
    "test_task_autotune.py::test_launch_config_recipes_widen_the_autotune_config_list",
    "test_task_format.py::test_a_task_imports_its_siblings_and_its_own_code_is_its_baseline",
    "test_task_format.py::test_an_entry_that_returns_nothing_draws_a_warning_naming_what_it_wrote",
    "test_task_format.py::test_an_in_place_entry_is_compared_on_its_mutated_input",
    "test_task_format.py::test_cases_may_be_tuples_and_fewer_than_five_need_a_reason",
    "test_task_format.py::test_the_reference_runs_on_deep_copies_with_poisoned_allocations",
    "test_task_workspace.py::test_optimize_keeps_its_store_in_the_tasks_workspace_and_reports_the_initial_cases",
    "test_task_workspace.py::test_timing_held_out_shapes_needs_a_gpu_and_says_so",
    "test_toolchain.py::test_add_is_idempotent_on_a_ready_toolchain",
    "test_toolchain.py::test_add_when_pip_cannot_reach_packages_says_so_and_keeps_the_log",
}


# `make test` runs the suite in two pytest-xdist workers (`-n 2 --dist loadgroup`). A module-scoped fixture is built
# once per worker that runs one of its module's tests, so each module below, whose fixture is costly (an index, a
# compile, a warm worker, a trained model) or whose tests meet in shared state (the containment module's marked
# children, the concurrency modules' process pools), goes whole to one worker: its group. The MCP modules share
# the session's patterns index (patterns_index_env), so they are one group. Every other test goes wherever a worker
# is free.
GROUPS = {
    "test_ascend.py": "ascend", "test_ascend_diagnose.py": "ascend_diagnose", "test_ask.py": "ask",
    "test_compile_worker.py": "compile_worker", "test_containment.py": "containment",
    "test_index_concurrency.py": "index_concurrency", "test_index_retrieval.py": "index_retrieval",
    "test_l3_attribution.py": "l3_attribution", "test_llm_rerank.py": "llm_rerank",
    "test_mcp_fuzz.py": "patterns_index", "test_mcp_server.py": "patterns_index", "test_suite_ops.py": "suite_ops",
    "test_train.py": "train", "test_worker_concurrency.py": "worker_concurrency",
}

# Tests that run with the other worker idle (see pytest_runtest_protocol): a fork bomb fills its cgroup's process
# table, and a sandbox probe beside it once found no pids cgroup.
ALONE = {"test_containment.py::test_a_fork_bomb_is_stopped"}


@pytest.hookimpl(tryfirst=True)  # before -m selects, so `-m "not slow"` sees the marks
def pytest_collection_modifyitems(config, items):
    matched = set()
    for item in items:
        for key in (item.path.name, f"{item.path.name}::{item.originalname}"):
            if key in SLOW:
                item.add_marker(pytest.mark.slow)
                matched.add(key)
            if key in ALONE:
                item.add_marker(pytest.mark.alone)
    if not any("::" in arg for arg in config.args):  # whole modules were collected: every entry must still name a test
        collected = {item.path.name for item in items}
        stale = sorted(key for key in SLOW - matched if key.split("::")[0] in collected)
        if stale:  # a warning, not an error: a renamed test only moves to the fast tier
            warnings.warn(pytest.PytestConfigWarning(f"tests/conftest.py SLOW names tests that do not exist: "
                                                     f"{', '.join(stale)}"), stacklevel=2)


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # a pytest-xdist hook (without xdist, never called), before its own
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with the groups of GROUPS. xdist's own reads `xdist_group` marks through `item._nodeid`,
    which pytest 9.2 no longer reads (the marks were silently ignored), so the groups are named here by module."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        """A work unit is a group of GROUPS, or else one test; the largest units are handed out first."""

        def _split_scope(self, nodeid: str) -> str:
            return GROUPS.get(Path(nodeid.split("::", 1)[0]).name, nodeid)

    return ModuleGroups(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist every test (its set-up included) holds a shared lock, an `alone` test the exclusive one; the gate
    makes a waiting `alone` test go before the other worker's next test (flock has no writer preference)."""
    if not hasattr(item.config, "workerinput"):  # a plain, serial run
        return (yield)
    shared = Path(item.config.option.basetemp).parent  # xdist gives each worker a basetemp in the run's one
    alone = item.get_closest_marker("alone") is not None
    with open(shared / "alone.gate", "a") as gate, open(shared / "alone.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        return (yield)


@pytest.fixture(autouse=True, scope="session")
def private_kopt_home(tmp_path_factory):
    """Session-scoped so that session fixtures (an index built once) see the isolated settings too."""
    real = kopt_home()
    root = tmp_path_factory.mktemp("isolated")
    home, config, work = root / "kopt-home", root / "config", root / "work"
    for folder in (home, config, work):
        folder.mkdir()
    if (real / "toolchains").is_dir():
        (home / "toolchains").symlink_to(real / "toolchains")
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("KOPT_")]:
            patch.delenv(name)
        patch.setenv("KOPT_HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(config))  # kopt reads $XDG_CONFIG_HOME/kopt before ~/.config/kopt
        patch.chdir(work)  # the default workspace, and its kopt.toml
        yield home


def _checkout(variable: str, required: bool) -> Path:
    where = CHECKOUTS[variable]
    if where is not None and where.is_dir():
        return where
    message = f"{variable}={str(where or '')!r} is not a checkout: run `make eval-data {variable}=DIR`"
    if required:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def triton_src() -> Path:
    """The Triton checkout at the pin (evals/retrieval/gold.yaml); an eval_data run without one fails."""
    return _checkout("TRITON_SRC", required=True)


@pytest.fixture(scope="session")
def triton_ascend_src() -> Path:
    """The triton-ascend checkout the Ascend pass notes cite; optional, so its one test skips without it."""
    return _checkout("TRITON_ASCEND_SRC", required=False)


class Replay:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 that answers from a list, in order."""

    def __init__(self, replies: list[dict]):
        self.replies = list(replies)
        self.requests: list[dict] = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                replay.requests.append(body)
                reply = replay.replies.pop(0) if replay.replies else {"status": 500, "body": "no more replies"}
                if "sleep_s" in reply:
                    time.sleep(reply["sleep_s"])
                if "status" in reply or "raw" in reply:
                    data = (reply.get("body") or reply.get("raw")).encode()
                    self.send_response(reply.get("status", 200))
                else:
                    data = json.dumps({
                        "id": "chatcmpl-replay", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": reply["content"]}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm_server():
    """Starts a Replay server for a list of replies; every server started is closed after the test."""
    servers: list[Replay] = []

    def start(replies: list[dict]) -> Replay:
        servers.append(Replay(replies))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def patterns_index_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a private KOPT_HOME with the pattern catalog ingested (the smallest real index); built once
    for the session, in this process (what `kopt ingest patterns` runs; the embedding model is often loaded here
    already), since its users (the MCP tests) only read it."""
    from kopt.config import Settings
    from kopt.ingest import ingest_corpus

    home = tmp_path_factory.mktemp("kopt-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KOPT_HOME", str(home))  # the vector cache's home
        ingest_corpus("patterns", Settings(index_path=home / "index"), progress=False)
    return {**os.environ, "KOPT_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
