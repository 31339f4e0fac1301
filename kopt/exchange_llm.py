"""The prompt exchange as a llama-index LLM, so `kopt ask` and the rerank stage can use it too (the proposer
needs only kopt.exchange.ExchangeChat, which works without llama-index)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms import CustomLLM
from pydantic import PrivateAttr

from kopt.exchange import ExchangeChat, ExchangeReply


class ExchangeLLM(CustomLLM):
    """The exchange as a llama-index LLM, so every caller (ask, rerank, the proposer) can use it."""

    exchange_dir: str
    model: str = "exchange"  # the model the request asks for (llm_model); the reply names the one that answered
    _repliers: set[str] = PrivateAttr(default_factory=set)  # the models the replies name, for reports

    @property
    def repliers(self) -> list[str]:
        return sorted(self._repliers)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=True, context_window=200000, num_output=8192)

    def exchange_chat(self, messages: list[dict[str, str]], context: dict[str, Any] | None = None,
                      on_request: Callable[[dict[str, Any], Path], None] | None = None) -> ExchangeReply:
        reply = ExchangeChat(self.exchange_dir, self.model).exchange_chat(messages, context, on_request)
        self._repliers.add(reply.model)
        return reply

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        reply = self.exchange_chat([{"role": m.role.value, "content": m.content or ""} for m in messages])
        return ChatResponse(message=ChatMessage(role="assistant", content=reply.text), raw={"model": reply.model})

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        reply = self.exchange_chat([{"role": "user", "content": prompt}])
        return CompletionResponse(text=reply.text, raw={"model": reply.model})

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted, **kwargs)
