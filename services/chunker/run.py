"""One strategy's run: its ChunkingContext, its progress, its usage.

A strategy's `chunk()` is plain synchronous code that calls
`context.report`; ProcessDocument is a stream. The run therefore works in a
thread of its own and hands its progress events to the stream through a
queue (`run_in_thread`), so that the operator sees a long LLM or embedding
phase move while it happens.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator
from typing import Any, TypeVar

import numpy as np

from chunklab.embeddings import late
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.errors import Cancelled
from chunklab.llm import ChatEndpoint
from chunklab.rpc import tracing
from chunklab.v1 import chunker_pb2
from services.chunker.cache import EmbeddingCache
from services.chunker.llm import LLMPool, Usage
from services.chunker.strategies.base import ChunkingContext

T = TypeVar("T")
_DONE = object()

# A running strategy reports at most every MIN_STEP of progress or every
# MIN_INTERVAL_S, whichever comes first: enough for a progress bar, not a flood.
MIN_STEP = 0.01
MIN_INTERVAL_S = 0.5


def progress_event(
    strategy: str, phase: int, fraction: float, message: str, **extra
) -> chunker_pb2.ProcessDocumentEvent:
    return chunker_pb2.ProcessDocumentEvent(
        progress=chunker_pb2.StrategyProgress(
            strategy=strategy, phase=phase, fraction_done=fraction, message=message, **extra
        )
    )


class Progress:
    """RUNNING events for one strategy, never going backwards, throttled."""

    def __init__(self, strategy: str, emit: Callable[[Any], None], cancelled: threading.Event) -> None:
        self._strategy = strategy
        self._emit = emit
        self._cancelled = cancelled
        self._fraction = 0.0
        self._sent_fraction = 0.0
        self._sent_at = 0.0
        self._lock = threading.Lock()

    def set(self, fraction: float, message: str, *, force: bool = False) -> None:
        if self._cancelled.is_set():
            raise Cancelled()
        with self._lock:
            self._fraction = max(self._fraction, min(1.0, float(fraction)))
            now = time.monotonic()
            if not (force or self._fraction - self._sent_fraction >= MIN_STEP or now - self._sent_at >= MIN_INTERVAL_S):
                return
            self._sent_fraction, self._sent_at = self._fraction, now
            self._emit(progress_event(self._strategy, chunker_pb2.STRATEGY_PHASE_RUNNING, self._fraction, message))

    def span(self, start: float, end: float) -> Callable[[float, str], None]:
        """A reporter that maps 0..1 onto [start, end] of the whole run."""
        return lambda fraction, message: self.set(start + (end - start) * max(0.0, min(1.0, fraction)), message)


class StrategyRun:
    """What one strategy gets besides the document: embeddings through the
    cache with the run's model, the run's LLM through the shared pool, and
    progress; everything it spends is added to `usage`, and the seconds spent
    in embedding calls to `embed_seconds` (the chunker's phase timings)."""

    def __init__(
        self,
        provider: EmbeddingProvider,
        cache: EmbeddingCache,
        llm: LLMPool,
        endpoint: ChatEndpoint,
        progress: Progress,
        cancelled: threading.Event,
    ) -> None:
        self.provider = provider
        self.cache = cache
        self.llm = llm
        self.endpoint = endpoint
        self.progress = progress
        self.cancelled = cancelled
        self.usage = Usage()
        self.embed_seconds = 0.0

    def embed(self, texts: list[str], report: Callable[[int, int], None] | None = None):
        """The texts' vectors through the cache, timed."""
        started = time.perf_counter()
        try:
            embedded = self.cache.embed(self.provider, list(texts), report)
        finally:
            self.embed_seconds += time.perf_counter() - started
        self.usage.add_embedding(embedded.tokens)
        return embedded

    def embed_spans(self, items: list[tuple[str, list[tuple[int, int]]]]) -> list[np.ndarray]:
        """Late chunking's span sums with the run's model, timed like embed (ADR 0129)."""
        if self.cancelled.is_set():
            raise Cancelled()
        started = time.perf_counter()
        try:
            return late.many_span_sums(self.provider.token_encoder(), items)
        finally:
            self.embed_seconds += time.perf_counter() - started

    def context(self, report: Callable[[float, str], None]) -> ChunkingContext:
        def embed(texts: list[str]) -> np.ndarray:
            if self.cancelled.is_set():
                raise Cancelled()
            # A strategy that embeds while it chunks (semantic's sentences) says how far that
            # embedding is; the bar stays where the strategy put it, the words move on.
            return self.embed(texts, lambda done, total: report(0.0, f"embedding {done}/{total} pieces")).vectors

        def chat_many(
            requests: list[list[dict]], *, model: str | None = None, max_tokens: int | None = None
        ) -> list[str]:
            return self.llm.chat_many(
                self.endpoint,
                requests,
                self.usage,
                lambda done, total: report(done / total, f"the LLM answered {done}/{total}"),
                self.cancelled,
                model=model,
                max_tokens=max_tokens,
            )

        spans = self.embed_spans if self.provider.token_encoder() is not None else None
        return ChunkingContext(embed=embed, chat_many=chat_many, report=report, embed_spans=spans)


def run_in_thread(
    work: Callable[[Callable[[Any], None]], T], name: str, cancelled: threading.Event, **ids: str
) -> Generator[Any, None, T]:
    """Runs work(emit) in a thread; yields what it emits; returns what it returns.
    The thread carries the caller's trace, and the work is a span of it with these
    ids (chunklab.rpc.tracing): the strategy's calls to the retriever are part of the trace.

    If the consumer stops listening (the stream is closed), `cancelled` is
    set and the work stops at its next progress report, embedding or LLM call.
    """
    events: queue.Queue = queue.Queue()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            with tracing.span("run strategy", **ids):
                box["value"] = work(events.put)
        except BaseException as exc:  # re-raised in the consumer
            box["error"] = exc
        finally:
            events.put(_DONE)

    thread = threading.Thread(target=tracing.carried(target), name=name, daemon=True)
    thread.start()
    finished = False
    try:
        while (item := events.get()) is not _DONE:
            yield item
        finished = True
    finally:
        if not finished:
            cancelled.set()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
