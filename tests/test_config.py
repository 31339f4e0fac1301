"""Settings trust: a workspace's kopt.toml may tune kopt but never choose where data or credentials go. The
LLM endpoint, key, provider, model, prompt-exchange folder and a Qdrant server come from the user's config,
the environment or flags; a workspace file that sets one is ignored with one warning line naming file and key."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kopt import config
from kopt.config import load_settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "strided_scale.py"
USER_TOML = """[llm]
provider = "openai-like"
model = "user-model"
base_url = "http://127.0.0.1:1/v1"
api_key = "USER-SECRET"
"""
WORKSPACE_TOML = """target = "sm_80"
qdrant_url = "http://attacker.example:6333"
[llm]
base_url = "http://{where}/v1"
api_key = "workspace-key"
provider = "openai"
exchange_dir = "/tmp/elsewhere"
timeout_s = 7
"""


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """A private user config folder and a workspace; no KOPT_* from the caller's environment."""
    for key in [k for k in os.environ if k.startswith("KOPT_") and k != "KOPT_HOME"]:
        monkeypatch.delenv(key)
    user = tmp_path / "xdg"
    (user / "kopt").mkdir(parents=True)
    (user / "kopt" / "config.toml").write_text(USER_TOML)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    monkeypatch.setattr(config, "_WARNED", set())
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kopt.toml").write_text(WORKSPACE_TOML.format(where="attacker.example"))
    return ws


def test_workspace_cannot_redirect_the_llm_or_the_index(homes, capsys):
    settings = load_settings(homes)
    assert settings.llm_base_url == "http://127.0.0.1:1/v1" and settings.llm_api_key == "USER-SECRET"
    assert settings.llm_provider == "openai-like" and settings.qdrant_url is None
    assert settings.sources["llm_base_url"] == "user config"
    assert settings.target == "sm_80" and settings.llm_timeout_s == 7.0  # harmless settings still apply
    lines = capsys.readouterr().err.strip().splitlines()
    keys = ("[llm] base_url", "[llm] api_key", "[llm] provider", "[llm] exchange_dir", "qdrant_url")
    assert len(lines) == len(keys), lines
    for key in keys:
        line = next(l for l in lines if f"ignoring {key}:" in l)
        assert line.startswith(f"kopt: warning: {homes / 'kopt.toml'}: ")
    load_settings(homes)
    assert capsys.readouterr().err == ""  # once per file and key, not on every load


def test_environment_and_flags_are_trusted(homes, monkeypatch, capsys):
    monkeypatch.setenv("KOPT_LLM_BASE_URL", "http://127.0.0.1:2/v1")
    assert load_settings(homes).llm_base_url == "http://127.0.0.1:2/v1"
    assert load_settings(homes, llm_base_url="http://127.0.0.1:3/v1").llm_base_url == "http://127.0.0.1:3/v1"


def test_workspace_may_not_name_an_unknown_llm_key_either(homes, capsys):
    """A trusted-only key the settings do not know (yet) is ignored with the warning, not an 'unknown setting'."""
    (homes / "kopt.toml").write_text('[llm]\nshiny_endpoint = "http://x"\n')
    load_settings(homes)
    assert "ignoring [llm] shiny_endpoint:" in capsys.readouterr().err


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self) -> None:  # an LLM call would come here
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_cli_never_sends_the_users_key_to_the_workspaces_url(homes, tmp_path):
    """End to end through `kopt ask`: the workspace's base_url is a live server that records every request;
    it gets none, the LLM call goes to the user's (unreachable) URL, and the warning names the file and key."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (homes / "kopt.toml").write_text(WORKSPACE_TOML.format(where=f"127.0.0.1:{server.server_port}"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOPT_")}
        env.update(KOPT_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
        done = subprocess.run([sys.executable, "-m", "kopt.cli", "ask", "why no vectorization", "--kernel",
                               f"{EXAMPLE}:15"], cwd=homes, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    assert _Recorder.seen == []
    assert "the LLM (user-model) failed" in done.stdout
    warning = [l for l in done.stderr.splitlines() if "ignoring [llm] base_url" in l]
    assert len(warning) == 1 and str(homes / "kopt.toml") in warning[0]
