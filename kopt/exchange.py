"""The prompt exchange: an LLM provider whose requests and replies are files in a folder.

Why: batch LLM APIs, air-gapped review and exact replays, and GPU machines that reach no LLM endpoint.
Wherever kopt would call an LLM it writes the exact chat request to DIR/<id>.request.json (and a readable
DIR/<id>.request.md); <id> is a hash of the request's content. The answer is DIR/<id>.reply.md: first line
`model: NAME`, then the reply text verbatim. Without a reply the caller gets ExchangeWaiting (nothing is
spent; run the same command again once the reply is there). A reply is refused when its request was changed
after it was written, and its use is recorded in DIR/<id>.consumed.json. The loop's requests name their run
and round, so a reply answers one round only; an identical request (the same `kopt ask` question) replays it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kopt.errors import KoptError
from kopt.llm import REPLY_FORMAT, ExchangeWaiting


@dataclass
class ExchangeReply:
    model: str  # the replier's model, from the reply's first line
    text: str
    request_id: str
    request: Path
    reply: Path


def request_id(body: dict[str, Any]) -> str:
    """The content hash of a request (its messages, model settings and context)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def make_request(messages: list[dict[str, str]], model: str | None, context: dict[str, Any] | None = None) -> dict:
    """The request body and its id: {"id", "model", "context", "messages", "reply_format"}."""
    body = {"model": model, "context": context or {}, "messages": messages, "reply_format": REPLY_FORMAT}
    return {"id": request_id(body), **body}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def readable(request: dict[str, Any], reply: Path) -> str:
    """The request as Markdown for a human replier: what to write where, then every message in order."""
    parts = [f"# LLM request {request['id']}", "",
             f"Write the answer to `{reply.name}` in this folder: {REPLY_FORMAT}.", ""]
    if request["context"]:
        parts += ["Context: " + ", ".join(f"{k} {v}" for k, v in request["context"].items()), ""]
    for m in request["messages"]:
        parts += [f"======== {m['role']} message ========", "", m["content"], ""]
    return "\n".join(parts)


def parse_reply_file(text: str, path: Path) -> tuple[str, str]:
    """(model, reply text) of a reply file, or a KoptError saying what its first line must be."""
    first, _, rest = text.partition("\n")
    if not first.lower().startswith("model:") or not first.split(":", 1)[1].strip():
        raise KoptError(f"{path}: the first line must be `model: NAME` (the model that wrote the reply), "
                        f"not {first[:60]!r}")
    return first.split(":", 1)[1].strip(), rest


class Exchange:
    """One exchange folder: write requests, read replies."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def paths(self, rid: str) -> tuple[Path, Path, Path, Path]:
        f = self.folder
        return f / f"{rid}.request.json", f / f"{rid}.request.md", f / f"{rid}.reply.md", f / f"{rid}.consumed.json"

    def write(self, request: dict[str, Any]) -> None:
        """Write the request files unless they are there already (a resumed call asks the same request)."""
        as_json, as_md, reply, _ = self.paths(request["id"])
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not as_json.exists():
                _write_atomic(as_md, readable(request, reply))
                _write_atomic(as_json, json.dumps(request, indent=1, sort_keys=True) + "\n")
        except OSError as exc:
            raise KoptError(f"{self.folder}: cannot write the LLM request: {exc.strerror or exc}") from exc

    def ask(self, request: dict[str, Any]) -> ExchangeReply:
        """The reply to a written request, or ExchangeWaiting; a reply to a changed request is refused."""
        rid = request["id"]
        as_json, _, reply, consumed = self.paths(rid)
        if not reply.is_file():
            raise ExchangeWaiting(rid, as_json, reply)
        on_disk = json.loads(as_json.read_text()) if as_json.is_file() else {}
        if request_id({k: v for k, v in on_disk.items() if k != "id"}) != rid:
            raise KoptError(f"{reply}: refused: its request {as_json.name} was changed (or removed) after it was "
                            f"written, so the reply may answer something else; restore the request or delete "
                            f"{reply.name}")
        model, text = parse_reply_file(reply.read_text(), reply)
        _write_atomic(consumed, json.dumps({"at": time.time(), "context": request["context"], "model": model}) + "\n")
        return ExchangeReply(model, text, rid, as_json, reply)


class ExchangeChat:
    """The exchange as the proposer needs it: files only, so it works where llama-index is not installed."""

    def __init__(self, exchange_dir: str, model: str = "exchange"):
        self.exchange_dir, self.model = exchange_dir, model

    @property
    def exchange(self) -> Exchange:
        return Exchange(Path(self.exchange_dir))

    def exchange_chat(self, messages: list[dict[str, str]], context: dict[str, Any] | None = None,
                      on_request: Callable[[dict[str, Any], Path], None] | None = None) -> ExchangeReply:
        """Write the request (after `on_request(request, reply_path)` saw it: the loop records it first), then
        read its reply."""
        request = make_request(messages, self.model, context)
        if on_request:
            on_request(request, self.exchange.paths(request["id"])[2])
        self.exchange.write(request)
        return self.exchange.ask(request)
