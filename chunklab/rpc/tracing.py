"""OpenTelemetry tracing for every ChunkLab process: the one owner (ADR 0066).

Each process calls `start(name, settings)` once, before it opens a channel or
builds a server. With an OTLP endpoint in the settings (OTEL_EXPORTER_OTLP_ENDPOINT)
it installs the SDK: spans of service.name `chunklab-<name>` are batched and
exported over OTLP/gRPC, every server that chunklab.rpc.server builds gets a server
interceptor and every channel that chunklab.rpc.channels opens a client interceptor
(chunklab.rpc.tracing_grpc), and the trace context travels in the calls' metadata
(W3C traceparent). Without one, nothing of OpenTelemetry is even imported:
servers and channels get no interceptor, `span` and `carried` cost a check.

Work that leaves the RPC's thread (an experiment on the evaluator's worker, a
strategy's run in the chunker) takes the trace along with `carried`, and
marks its own step with `span`. Spans carry ids (documents, strategies,
configurations, experiments), never a document's or a question's text.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import grpc

from chunklab.settings import Settings

log = logging.getLogger("chunklab.rpc.tracing")

SERVICE_NAMESPACE = "chunklab"
# Attribute names of ChunkLab's own ids on spans (chunklab.document_id, ...).
ATTRIBUTE_PREFIX = "chunklab."
# Spans still queued at shutdown get this long to reach the collector.
FLUSH_MS = 2000

T = TypeVar("T")


class _Tracing:
    """The installed SDK: its provider (ended by `stop`) and the tracer everything uses."""

    def __init__(self, provider: Any, tracer: Any) -> None:
        self.provider = provider
        self.tracer = tracer


_tracing: _Tracing | None = None


def service_name(process: str) -> str:
    return f"{SERVICE_NAMESPACE}-{process}"


def start(process: str, settings: Settings) -> bool:
    """Turns tracing on for this process when the settings name an OTLP endpoint
    (and OTEL_SDK_DISABLED is not true); returns whether it is on. The SDK reads
    its other standard variables itself (OTEL_TRACES_SAMPLER, OTEL_BSP_*,
    OTEL_EXPORTER_OTLP_HEADERS/CERTIFICATE/TIMEOUT, OTEL_RESOURCE_ATTRIBUTES);
    service.name is always chunklab-<process>."""
    global _tracing
    if not settings.tracing:
        return False
    if _tracing is not None:
        stop()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create(
        {
            "service.name": service_name(process),
            "service.namespace": SERVICE_NAMESPACE,
            # Replicas of one service (ADR on replicas) tell themselves apart by it.
            "service.instance.id": f"{socket.gethostname()}:{os.getpid()}",
        }
    )
    # Not the global provider: a test process can stop tracing and start it again.
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint)))
    _tracing = _Tracing(provider, provider.get_tracer("chunklab"))
    log.info("tracing: spans of %s go to %s over OTLP/gRPC", service_name(process), settings.otlp_endpoint)
    return True


def stop(flush_ms: int = FLUSH_MS) -> None:
    """Sends what is queued (waiting at most flush_ms) and turns tracing off:
    channels and servers made from now on are not traced."""
    global _tracing
    tracing, _tracing = _tracing, None
    if tracing is not None:
        tracing.provider.force_flush(flush_ms)
        tracing.provider.shutdown()


def active() -> bool:
    return _tracing is not None


def server_interceptors() -> list[grpc.ServerInterceptor]:
    """The server's tracing interceptor (first, so that it sees every other
    one's outcome), or none when tracing is off."""
    if _tracing is None:
        return []
    from chunklab.rpc import tracing_grpc

    return [tracing_grpc.ServerTracing(_tracing.tracer)]


def traced_channel(channel: grpc.Channel) -> grpc.Channel:
    """The channel with the client interceptor when tracing is on, else itself."""
    if _tracing is None:
        return channel
    from chunklab.rpc import tracing_grpc

    return grpc.intercept_channel(channel, tracing_grpc.ClientTracing(_tracing.tracer))


def attributes(**values: Any) -> dict[str, Any]:
    """ChunkLab ids as span attributes (chunklab.<name>), the empty ones left out."""
    return {ATTRIBUTE_PREFIX + name: value for name, value in values.items() if value not in ("", None, [], ())}


@contextmanager
def span(name: str, **ids: Any) -> Iterator[None]:
    """A span around a step of work, a child of the current one (in a new trace
    if there is none), with ChunkLab ids as its attributes; nothing when off.
    An exception escaping it marks the span as failed."""
    if _tracing is None:
        yield
        return
    with _tracing.tracer.start_as_current_span(name, attributes=attributes(**ids)):
        yield


def carried(work: Callable[..., T]) -> Callable[..., T]:
    """`work`, to run in another thread as part of the current trace (it runs in
    a copy of the caller's context); `work` itself when tracing is off."""
    if _tracing is None:
        return work
    context = contextvars.copy_context()

    @functools.wraps(work)
    def in_context(*args: Any, **kwargs: Any) -> T:
        return context.copy().run(work, *args, **kwargs)  # a context is entered by one thread at a time

    return in_context
