"""Every test session runs with its own KOPT_HOME, so no test reads, writes or locks the user's index.
The Ascend toolchain (set up once by `make test` under the real KOPT_HOME) is shared through a link.
`llm_server` starts loopback OpenAI-compatible servers that replay chat-completion replies."""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kopt.config import kopt_home


@pytest.fixture(autouse=True, scope="session")
def private_kopt_home(tmp_path_factory):
    real = kopt_home()
    home = tmp_path_factory.mktemp("kopt-home")
    if (real / "toolchains").is_dir():
        (home / "toolchains").symlink_to(real / "toolchains")
    saved = os.environ.get("KOPT_HOME")
    os.environ["KOPT_HOME"] = str(home)
    yield home
    if saved is None:
        os.environ.pop("KOPT_HOME", None)
    else:
        os.environ["KOPT_HOME"] = saved


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
