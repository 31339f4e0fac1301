"""Toolchains: which Python (with which Triton) compiles for a target.

NVIDIA Triton lives in kopt's own environment and is the default. triton-ascend installs as the `triton`
package too, so it gets a virtual environment of its own under KOPT_HOME/toolchains/ascend, and the
harness compiles through that interpreter in a child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable

from kopt.config import kopt_home
from kopt.errors import KoptError

DEFAULT_ARCH = {"nvidia": "sm_90", "ascend": "Ascend910B3"}


@dataclass(frozen=True)
class ToolchainSpec:
    name: str
    packages: tuple[str, ...]  # installed in this order, in one pip call
    probe: str  # Python run by the toolchain's interpreter; prints a JSON object of facts, fails if broken


ASCEND = ToolchainSpec(
    name="ascend",
    # torch (CPU build, local wheel) only because task files import it to build inputs; pybind11 and numpy
    # are triton-ascend's undeclared needs.
    packages=("torch==2.13.0", "triton-ascend==3.2.0", "pybind11", "numpy>=2.0,<2.4"),
    probe=(
        "import json, os, triton, torch, numpy\n"
        "from triton.backends.ascend.utils import _get_triton_adapter_opt_path\n"
        "opt = _get_triton_adapter_opt_path()\n"
        "assert os.access(opt, os.X_OK), 'triton-adapter-opt missing: ' + opt\n"
        "print(json.dumps({'triton': triton.__version__, 'torch': torch.__version__, 'numpy': numpy.__version__,"
        " 'adapter_opt': opt, 'cann': os.environ.get('ASCEND_HOME_PATH')}))\n"
    ),
)
SPECS = {"ascend": ASCEND}


@dataclass
class Toolchain:
    """A toolchain's state, as `kopt toolchain list|doctor` reports it."""

    name: str
    python: str
    home: str | None  # None for the built-in one
    ready: bool
    facts: dict[str, str | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_target(target: str | None) -> tuple[str, str]:
    """'ascend:Ascend910B3' -> ('ascend', 'Ascend910B3'); 'ascend' gets its default arch; 'sm_90' is NVIDIA."""
    if not target or target.startswith("sm_") or target.startswith("nvidia"):
        arch = target.split(":", 1)[1] if target and ":" in target else (target or DEFAULT_ARCH["nvidia"])
        return "nvidia", arch
    name, _, arch = target.partition(":")
    if name not in SPECS:
        raise KoptError(f"unknown target {target!r}; known: sm_NN (NVIDIA), ascend[:ARCH]")
    return name, arch or DEFAULT_ARCH[name]


def target_family(target: str | None) -> str:
    """'ascend' for ascend[:ARCH] targets, else 'nvidia' (sm_90, 90, None); never raises, unlike parse_target."""
    return "ascend" if (target or "").split(":", 1)[0].strip().lower() == "ascend" else "nvidia"


def toolchain_home(name: str) -> Path:
    return kopt_home() / "toolchains" / name


def _venv_python(home: Path) -> Path:
    return home / "bin" / "python"


def _probe(python: Path, spec: ToolchainSpec, timeout: float = 120) -> tuple[dict, str | None]:
    """Run the spec's probe in the toolchain; (facts, None) when healthy, ({}, why) when not."""
    try:
        proc = subprocess.run([str(python), "-c", spec.probe], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {}, f"{python} did not run: {exc}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"{python}: {last}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def inspect_toolchain(name: str) -> Toolchain:
    """What `doctor` reports: is the toolchain there, does its Triton import, is its adapter present."""
    if name == "nvidia":
        try:
            version = metadata.version("triton")
        except metadata.PackageNotFoundError:
            return Toolchain("nvidia", sys.executable, None, False, problems=["triton is not installed in kopt's env"])
        return Toolchain("nvidia", sys.executable, None, True, facts={"triton": version})
    spec = _spec(name)
    home = toolchain_home(name)
    python = _venv_python(home)
    if not python.exists():
        return Toolchain(name, str(python), str(home), False,
                         problems=[f"not set up: run `kopt toolchain add {name}`"])
    facts, problem = _probe(python, spec)
    tc = Toolchain(name, str(python), str(home), problem is None, facts=facts, problems=[problem] if problem else [])
    if tc.ready and not facts.get("cann"):
        tc.facts["note"] = "no CANN (ASCEND_HOME_PATH unset): IR stages only, no binary, no NPU runs"
    return tc


def list_toolchains() -> list[Toolchain]:
    return [inspect_toolchain("nvidia")] + [inspect_toolchain(name) for name in SPECS]


def toolchain_python(name: str) -> Path:
    """The interpreter to compile with; a clear error if the toolchain is not set up."""
    if name == "nvidia":
        return Path(sys.executable)
    _spec(name)
    python = _venv_python(toolchain_home(name))
    if not python.exists():
        raise KoptError(f"the {name} toolchain is not set up ({python} missing)",
                        hint=f"run `kopt toolchain add {name}`")
    return python


def _spec(name: str) -> ToolchainSpec:
    if name not in SPECS:
        raise KoptError(f"unknown toolchain {name!r}; known: nvidia (built in), {', '.join(SPECS)}")
    return SPECS[name]


def add_toolchain(name: str, python: str | None = None, say: Callable[[str], None] = lambda _: None) -> Toolchain:
    """Create (or repair) the toolchain's venv and install its packages; a no-op when already healthy."""
    if name == "nvidia":
        return inspect_toolchain("nvidia")
    spec = _spec(name)
    home = toolchain_home(name)
    venv_python = _venv_python(home)
    if venv_python.exists():
        facts, problem = _probe(venv_python, spec)
        if problem is None:
            say(f"{name}: already set up at {home} (triton {facts.get('triton')})")
            return inspect_toolchain(name)
        say(f"{name}: repairing {home} ({problem})")
    else:
        base = python or sys.executable
        say(f"{name}: creating a virtual environment at {home} with {base}")
        home.parent.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run([base, "-m", "venv", str(home)], capture_output=True, text=True)
            why = (proc.stderr.strip().splitlines() or ["no output"])[-1] if proc.returncode else None
        except OSError as exc:
            why = str(exc)
        if why:
            raise KoptError(f"could not create a venv at {home} with {base}: {why}",
                            hint="pass --python with a working Python 3.11 interpreter")
    log = home / "pip-install.log"
    say(f"{name}: pip install {' '.join(spec.packages)} (log: {log})")
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.run([str(venv_python), "-m", "pip", "install", "--disable-pip-version-check",
                               *spec.packages], stdout=out, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        errors = [line for line in log.read_text().splitlines() if line.startswith("ERROR")]
        raise KoptError(f"pip could not install the {name} toolchain: {errors[-1] if errors else 'see the log'}",
                        hint=f"check the network or package index; full log: {log}; re-run to retry")
    facts, problem = _probe(venv_python, spec)
    if problem:
        raise KoptError(f"the {name} toolchain installed but does not work: {problem}", hint=f"log: {log}")
    (home / "toolchain.json").write_text(json.dumps(
        {"name": name, "packages": spec.packages, "facts": facts, "base_python": python or sys.executable,
         "installed_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(time.monotonic() - started, 1)},
        indent=2))
    say(f"{name}: ready (triton {facts.get('triton')}) in {time.monotonic() - started:.0f}s")
    return inspect_toolchain(name)
