"""An OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, ...).

One small client for the contextual strategies, answers and judges: every
call has a timeout, transient failures (429, 5xx, connection) are retried
with backoff by the openai library, and every failure ends as an LLMError
whose message says what went wrong and where, in our words: the provider's
own text (its error body, the connection library's message) goes to the log
of the service that called, never into the message (ADR 0079).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunklab.errors import Cancelled, status_meaning
from chunklab.rpc.limits import excerpt

if TYPE_CHECKING:
    import openai

# `openai` is imported where a client is made and used, not with this module: its import takes
# about a second of CPU, which every service, the UI and each CLI command would pay at start
# whether or not an LLM is configured.

log = logging.getLogger(__name__)


class LLMError(Exception):
    """The endpoint could not give a usable reply; `status_code` is the HTTP
    status when the endpoint answered with one (None otherwise); `unusable`
    when it answered 200 with what is no chat completion (the openai client
    retries transient failures, never these: a caller may ask again)."""

    def __init__(
        self, message: str, status_code: int | None = None, unusable: bool = False, names_format: bool = False
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.unusable = unusable
        # Whether the endpoint's own error text names response_format (the text itself goes
        # to the log only, ADR 0079): llama-cpp-python refuses an unknown form with a 500.
        self.names_format = names_format


@dataclass(frozen=True)
class ChatEndpoint:
    base_url: str
    api_key: str
    model: str
    timeout_s: float = 60.0
    max_retries: int = 2
    # Whether JSON replies are asked for through response_format (chunklab.llm_json):
    # "auto" tries it and falls back where the endpoint refuses it, "off" never sends it.
    structured_output: str = "auto"

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)

    def describe(self) -> str:
        """Where calls go, without the key."""
        return f"{self.model} at {self.base_url}"


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    # Why the model stopped: "stop", "length" (cut at max_tokens), ... ("" when it did not say).
    finish_reason: str = ""
    # The endpoint reported no usage: the token counts are ours (chunklab.text.tokens), an estimate.
    usage_estimated: bool = False


def _counted(messages: list[dict], text: str) -> tuple[int, int]:
    """(prompt, completion) tokens by our own tokenizer, for an endpoint that reports none."""
    from chunklab.text import tokens

    return sum(tokens.count(str(m.get("content") or "")) for m in messages), tokens.count(text)


def _names_format(exc: openai.APIStatusError) -> bool:
    body = json.dumps(exc.body, default=str) if exc.body is not None else ""
    return "response_format" in body


class ChatClient:
    def __init__(self, endpoint: ChatEndpoint) -> None:
        if not endpoint.configured:
            raise LLMError("no LLM endpoint is configured (set CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL)")
        self.endpoint = endpoint
        import openai

        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key or "not-needed",
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
        )

    def _fail(self, exc: Exception) -> LLMError:
        """The LLMError a person reads, by the exception's class and status code; the
        provider's own text goes to the log (ADR 0079)."""
        import openai

        where = self.endpoint.describe()
        log.warning("the LLM (%s) failed: %s: %s", where, type(exc).__name__, excerpt(exc, 2000))
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"the LLM ({where}) did not answer within {self.endpoint.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"the LLM ({where}) is unreachable: no connection could be made or it was cut "
                f"(after {self.endpoint.max_retries} retries); check the address and that it is running"
            )
        if isinstance(exc, openai.RateLimitError):
            return LLMError(f"the LLM ({where}) refused: rate limited after {self.endpoint.max_retries} retries")
        if isinstance(exc, openai.APIStatusError):
            return LLMError(
                f"the LLM ({where}) answered HTTP {exc.status_code} ({status_meaning(exc.status_code)}); "
                "its reply is in the service log",
                exc.status_code,
                names_format=_names_format(exc),
            )
        return LLMError(
            f"the LLM ({where}) gave an unusable reply (not a chat completion); its reply is in the service log",
            unusable=True,
        )

    def complete(
        self,
        messages: list[dict],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        response_format: dict | None = None,
    ) -> ChatResult:
        """One reply. `response_format` (e.g. a json_schema) is passed as it is, for
        endpoints that constrain their output; an endpoint that refuses it answers 400."""
        import openai

        started = time.perf_counter()
        try:
            response = self._client.chat.completions.create(
                model=self.endpoint.model,
                messages=messages,
                temperature=temperature,
                **({"max_tokens": max_tokens} if max_tokens else {}),
                **({"response_format": response_format} if response_format else {}),
            )
            choice = response.choices[0]
            text = choice.message.content
        except (openai.OpenAIError, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
            raise self._fail(exc) from None
        if not isinstance(text, str):
            raise LLMError(f"the LLM ({self.endpoint.describe()}) replied without text")
        usage = response.usage
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        estimated = usage is None
        if estimated:
            prompt_tokens, completion_tokens = _counted(messages, text)
        return ChatResult(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=(time.perf_counter() - started) * 1e3,
            finish_reason=getattr(choice, "finish_reason", "") or "",
            usage_estimated=estimated,
        )

    def stream(
        self,
        messages: list[dict],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        cancelled: threading.Event | None = None,
    ) -> Iterator[str | ChatResult]:
        """Yields pieces of text as they arrive, then one ChatResult with the whole text.

        Once `cancelled` is set (the caller went away) the reply is dropped: the
        connection is closed at the next piece, so the model stops writing, and
        Cancelled is raised. Closing the generator closes the connection too.
        A stream that ends before the model said why it stopped (no
        finish_reason: the connection was cut, or what came back was no chat
        completion stream) is an LLMError, never a short answer. Chunks with
        no choices, an empty delta or a role alone are skipped; a stream with
        no usage (llama.cpp's, some proxies') is counted by our tokenizer.
        """
        import openai

        started = time.perf_counter()
        pieces: list[str] = []
        prompt_tokens = completion_tokens = 0
        usage_seen = False
        finished = ""
        stream = None
        try:
            stream = self._client.chat.completions.create(
                model=self.endpoint.model,
                messages=messages,
                temperature=temperature,
                stream=True,
                stream_options={"include_usage": True},
                **({"max_tokens": max_tokens} if max_tokens else {}),
            )
            for event in stream:
                if cancelled is not None and cancelled.is_set():
                    raise Cancelled("the answer was dropped: its caller went away")
                usage = getattr(event, "usage", None)
                if usage is not None:
                    usage_seen = True
                    prompt_tokens = usage.prompt_tokens or 0
                    completion_tokens = usage.completion_tokens or 0
                for choice in event.choices or []:
                    delta = getattr(choice.delta, "content", None) if choice.delta else None
                    if isinstance(delta, str) and delta:
                        pieces.append(delta)
                        yield delta
                    finished = finished or (choice.finish_reason or "")
        except (openai.OpenAIError, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
            raise self._fail(exc) from None
        finally:
            if stream is not None:
                stream.close()
        if not finished:
            written = sum(len(p) for p in pieces)
            raise LLMError(
                f"the LLM ({self.endpoint.describe()}) stopped before the end of its reply: the stream "
                f"ended after {written} characters without saying it was finished (the connection was "
                "cut, or the endpoint does not stream chat completions)"
            )
        text = "".join(pieces)
        if not usage_seen:
            prompt_tokens, completion_tokens = _counted(messages, text)
        yield ChatResult(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=(time.perf_counter() - started) * 1e3,
            finish_reason=finished,
            usage_estimated=not usage_seen,
        )
