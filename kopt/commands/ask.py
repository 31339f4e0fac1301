"""`kopt ask "QUESTION" [--kernel TASK[:LINE]]`: an answer from evidence, with citations."""

from __future__ import annotations

import click

from kopt.output import emit_json, json_option


@click.command("ask")
@click.argument("question")
@click.option("--kernel", help="A task file, optionally with a source line: TASK[:LINE].")
@click.option("--target", help="sm_NN (NVIDIA; default: settings.target, else sm_90) or ascend[:ARCH] (triton-ascend).")
@click.option("--offline", is_flag=True, help="Ignore a configured LLM; give the structured evidence answer.")
@json_option
def ask_cmd(question: str, kernel: str | None, target: str | None, offline: bool, as_json: bool) -> None:
    """Ask why: with --kernel, the lowered code's facts at that line come first, then the compiler's reasons."""
    from kopt.ask import ask, parse_kernel_arg
    from kopt.commands.knowledge import steps
    from kopt.config import load_settings
    from kopt.diagnose.targets import target_for
    from kopt.llm import make_llm

    settings = load_settings(target=target)
    if target:
        target_for(target).check_target(target)  # a typo is an error even when no kernel gets compiled
    path, line = parse_kernel_arg(kernel) if kernel else (None, None)
    llm = None if offline else make_llm(settings)
    with steps(not as_json) as step:
        answer = ask(question, kernel=path, line=line, settings=settings, llm=llm, step=step)
    if as_json:
        emit_json(answer.to_dict())
        return
    from kopt.diagnose.report import render_answer

    render_answer(answer)
