"""The LLM behind ChunkingContext.chat_many: which endpoint, how many calls at once.

One process-wide pool of `llm_max_concurrency` threads bounds the calls in
flight across every request, so two documents processed at once do not
double the load on the endpoint. Every call has the configured timeout and
retries (chunklab.llm.ChatClient); the first call that fails fails the whole
batch, and the calls not yet started are cancelled.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

from chunklab.endpoints import OPEN, EndpointPolicy
from chunklab.errors import Cancelled
from chunklab.llm import ChatClient, ChatEndpoint, ChatResult, LLMError
from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import NoLLM

NO_LLM = "no LLM endpoint is configured (set CHUNKLAB_LLM_BASE_URL and CHUNKLAB_LLM_MODEL)"


@dataclasses.dataclass
class Usage:
    """Tokens and calls of one run, added to from several threads."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    embedding_tokens: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def add_chat(self, result: ChatResult) -> None:
        with self._lock:
            self.prompt_tokens += result.prompt_tokens
            self.completion_tokens += result.completion_tokens
            self.llm_calls += 1

    def add_embedding(self, tokens: int) -> None:
        with self._lock:
            self.embedding_tokens += tokens

    def to_proto(self):
        from chunklab.v1 import common_pb2

        return common_pb2.TokenUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            embedding_tokens=self.embedding_tokens,
            llm_calls=self.llm_calls,
        )


class LLMPool:
    def __init__(self, endpoint: ChatEndpoint, max_concurrency: int, policy: EndpointPolicy = OPEN) -> None:
        self.endpoint = endpoint
        self.policy = policy  # the hosts a request may name (CHUNKLAB_ALLOWED_ENDPOINTS, ADR 0126)
        self._executor = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="llm")
        self._clients: dict[ChatEndpoint, ChatClient] = {}
        self._lock = threading.Lock()

    def describe_default(self) -> str:
        return self.endpoint.describe() if self.endpoint.configured else ""

    def resolve(self, choice: chunker_pb2.LLMChoice | None) -> ChatEndpoint:
        """The endpoint for a request: its choice where given, else the configuration.

        The configured key goes only to the configured base URL: a request
        that names another base URL brings its own key (or none). A base URL
        this chunker may not call is refused (InvalidArgument) before any work.
        """
        if choice is None:
            return self.endpoint
        base_url = self.policy.check(choice.base_url, "llm.base_url")
        if base_url and base_url.rstrip("/") != self.endpoint.base_url.rstrip("/"):
            return dataclasses.replace(
                self.endpoint,
                base_url=base_url,
                api_key=choice.api_key,
                model=choice.model.strip() or self.endpoint.model,
            )
        return dataclasses.replace(
            self.endpoint,
            api_key=choice.api_key or self.endpoint.api_key,
            model=choice.model.strip() or self.endpoint.model,
        )

    def _client(self, endpoint: ChatEndpoint) -> ChatClient:
        with self._lock:
            client = self._clients.get(endpoint)
            if client is None:
                client = self._clients[endpoint] = ChatClient(endpoint)
            return client

    def chat_many(
        self,
        endpoint: ChatEndpoint,
        requests: list[list[dict]],
        usage: Usage,
        progress: Callable[[int, int], None],
        cancelled: threading.Event,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
    ) -> list[str]:
        """One reply text per message list, in order; raises NoLLM or LLMError.

        A blank reply is an error too: a contextual chunk without its
        context must never be stored.
        """
        if not endpoint.configured:
            raise NoLLM(NO_LLM)
        if model:
            endpoint = dataclasses.replace(endpoint, model=model)
        client = self._client(endpoint)
        if not requests:
            return []
        stop = threading.Event()

        def call(messages: list[dict]) -> str:
            if stop.is_set() or cancelled.is_set():
                raise Cancelled()
            result = client.complete(messages, max_tokens=max_tokens)
            usage.add_chat(result)
            if not result.text.strip():
                raise LLMError(f"the LLM ({endpoint.describe()}) replied with empty text")
            return result.text

        futures: list[Future] = [self._executor.submit(call, messages) for messages in requests]
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                if cancelled.is_set():
                    raise Cancelled()
                for future in done:
                    future.result()  # the first failure ends the batch
                progress(len(futures) - len(pending), len(futures))
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
        return [future.result() for future in futures]
