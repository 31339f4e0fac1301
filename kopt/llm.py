"""The LLM from settings, through llama-index: an OpenAI-compatible server (vLLM, SGLang, Ollama,
llama.cpp), OpenAI, Anthropic, or the prompt exchange (requests and replies as files, kopt/exchange.py).
None when no provider is configured: every caller has an offline path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kopt.config import Settings
from kopt.errors import KoptError

PROVIDERS = ("openai-like", "openai", "anthropic", "exchange")
REPLY_FORMAT = "first line `model: NAME` (the model that wrote it), then the reply text verbatim"


class ExchangeWaiting(KoptError):
    """A prompt-exchange request is written and has no reply yet: the caller stops cleanly (nothing is spent)
    and the same command goes on once the reply is there."""

    def __init__(self, request_id: str, request: Path, reply: Path):
        self.request_id, self.request, self.reply = request_id, request, reply
        super().__init__(f"waiting for the LLM reply to {request}: write {reply} ({REPLY_FORMAT}), then run the "
                         "same command again")


def make_llm(settings: Settings) -> Any | None:
    """A llama-index LLM, or None when settings.llm_provider is unset."""
    provider = settings.llm_provider
    if not provider:
        return None
    if provider not in PROVIDERS:
        raise KoptError(f"unknown llm_provider {provider!r}; use one of {', '.join(PROVIDERS)}")
    if provider == "exchange":
        if not settings.llm_exchange_dir:
            raise KoptError("llm_provider exchange needs llm_exchange_dir (--llm-exchange DIR, or [llm] exchange_dir)")
        folder, model = str(Path(settings.llm_exchange_dir).resolve()), settings.llm_model or "exchange"
        try:
            from kopt.exchange_llm import ExchangeLLM
        except ImportError:  # no llama-index: the proposer still works (it needs only the files)
            from kopt.exchange import ExchangeChat

            return ExchangeChat(folder, model)
        return ExchangeLLM(exchange_dir=folder, model=model)
    if not settings.llm_model:
        raise KoptError(f"llm_provider {provider} needs llm_model (KOPT_LLM_MODEL or [llm] model in kopt.toml)")
    try:
        if provider == "openai-like":
            from llama_index.llms.openai_like import OpenAILike

            if not settings.llm_base_url:
                raise KoptError("llm_provider openai-like needs llm_base_url, e.g. http://localhost:8000/v1")
            return OpenAILike(model=settings.llm_model, api_base=settings.llm_base_url,
                              api_key=settings.llm_api_key or "none", timeout=settings.llm_timeout_s,
                              is_chat_model=True, context_window=32768, max_retries=0)
        if provider == "openai":
            from llama_index.llms.openai import OpenAI

            return OpenAI(model=settings.llm_model, api_key=settings.llm_api_key, api_base=settings.llm_base_url,
                          timeout=settings.llm_timeout_s)
        from llama_index.llms.anthropic import Anthropic

        return Anthropic(model=settings.llm_model, api_key=settings.llm_api_key, timeout=settings.llm_timeout_s)
    except ImportError as exc:
        package = {"openai-like": "llama-index-llms-openai-like", "openai": "llama-index-llms-openai",
                   "anthropic": "llama-index-llms-anthropic"}[provider]
        raise KoptError(f"llm_provider {provider} needs the package {package}: pip install {package}") from exc


def complete(llm: Any, system: str, user: str) -> str:
    """One chat turn; a server that fails or times out is a KoptError naming it."""
    from llama_index.core.llms import ChatMessage

    try:
        reply = llm.chat([ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)])
    except KoptError:  # the exchange's waiting signal and its refusals already say what to do
        raise
    except Exception as exc:  # network, HTTP and provider errors all end the same way for the user
        raise KoptError(f"the LLM ({getattr(llm, 'model', '?')}) failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
    return (reply.message.content or "").strip()
