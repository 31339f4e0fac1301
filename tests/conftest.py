"""Every test session runs isolated from the user's settings: its own KOPT_HOME, an empty user config folder,
a temporary working directory (so no kopt.toml is read) and no KOPT_* variables. The Ascend toolchain (set up once
by `make test` under the real KOPT_HOME) is shared through a link.
`llm_server` starts loopback OpenAI-compatible servers that replay chat-completion replies.
`triton_src` / `triton_ascend_src` are the compiler checkouts the eval_data tests read (`make eval-data`)."""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kopt.config import kopt_home

# Read before the session clears KOPT_* and changes directory: `make eval-data TRITON_SRC=DIR`
# (KOPT_TRITON_SRC, which `kopt ingest triton` reads, names one too).
CHECKOUTS = {name: os.environ.get(name) or os.environ.get(f"KOPT_{name}") for name in ("TRITON_SRC", "TRITON_ASCEND_SRC")}
CHECKOUTS = {name: Path(value).expanduser().resolve() if value else None for name, value in CHECKOUTS.items()}


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
