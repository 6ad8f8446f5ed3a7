"""The two gRPC interceptors of chunklab.rpc.tracing, imported only when tracing is on.

Written here rather than taken from opentelemetry-instrumentation-grpc (ADR
0066): its client interceptor hands a server stream back as a plain generator,
which has no `cancel()` (ChunkLab's clients cancel a stream they stop
reading), and keeps the stream's span current in the caller's thread between
reads. These keep every call object as gRPC made it, end a client span when
the call is done (its done-callback) and make a server span current only
while the handler runs, step by step for a stream.

Spans follow OpenTelemetry's RPC conventions: named `<service>/<method>`,
rpc.system/rpc.service/rpc.method/rpc.grpc.status_code, SERVER and CLIENT
kinds, ERROR status for a failed call (on a server, only for the codes that
mean the server failed). Health and reflection calls are not traced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from chunklab.rpc import security, tracing

# Server spans fail only for these codes; the rest are the caller's doing.
SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
# String fields of a request (or of its header, key, options ...) that become
# chunklab.<field> attributes: ids and names only, never text.
ID_FIELDS = (
    "document_id",
    "experiment_id",
    "resume_experiment_id",
    "question_set_id",
    "bulk_load_id",
    "query_id",
    "strategy",
    "config_id",
    "embedding_model",
    "collection",
)
NESTED = ("header", "key", "options", "retrieval", "document", "config")
STRATEGY_SPEC = "chunklab.v1.StrategySpec"


def _rpc_attributes(method: str) -> tuple[str, dict[str, Any]]:
    service, _, name = method.lstrip("/").partition("/")
    return f"{service}/{name}", {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}


@functools.cache
def _plan(descriptor: Descriptor) -> tuple[tuple[str, str, str], ...]:
    """(outer field or '', field, kind) to read from a message of this type: the
    id fields, one level down too, and the names of StrategySpec messages."""
    steps: list[tuple[str, str, str]] = []
    for outer in ("", *NESTED):
        if outer:
            field = descriptor.fields_by_name.get(outer)
            if field is None or field.message_type is None or field.is_repeated:
                continue
            inner = field.message_type
        else:
            inner = descriptor
        for name, field in inner.fields_by_name.items():
            if field.message_type is not None and field.message_type.full_name == STRATEGY_SPEC:
                repeated = field.is_repeated
                steps.append((outer, name, "specs" if repeated else "spec"))
            elif name in ID_FIELDS and field.type == FieldDescriptor.TYPE_STRING and not field.is_repeated:
                steps.append((outer, name, "id"))
    return tuple(steps)


def message_attributes(message: Any) -> dict[str, Any]:
    """chunklab.<field> attributes of a request's (or reply's) ids, where they are set;
    none for a request that could not be read (chunklab.rpc.undecodable)."""
    found: dict[str, Any] = {}
    if not isinstance(message, Message):
        return found
    for outer, name, kind in _plan(message.DESCRIPTOR):
        if outer and not message.HasField(outer):
            continue
        holder = getattr(message, outer) if outer else message
        value = getattr(holder, name)
        if kind == "spec":
            name, value = "strategy", value.name
        elif kind == "specs":
            name, value = "strategies", [spec.name for spec in value]
        if value and tracing.ATTRIBUTE_PREFIX + name not in found:
            found[tracing.ATTRIBUTE_PREFIX + name] = value
    return found


def _set_code(span: Any, code: grpc.StatusCode | None, failed: Callable[[grpc.StatusCode], bool]) -> None:
    code = code or grpc.StatusCode.OK
    span.set_attribute("rpc.grpc.status_code", code.value[0])
    if failed(code):
        span.set_status(Status(StatusCode.ERROR, code.name))


# -- clients ------------------------------------------------------------------------


class ClientTracing(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """A CLIENT span per call, a child of the caller's current span, whose
    context goes to the server in the call's metadata."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer

    def _traced(self, continuation, details: grpc.ClientCallDetails, request: Any, unary_request: bool):
        if security.is_open(details.method):
            return continuation(details, request)
        name, attributes = _rpc_attributes(details.method)
        if unary_request:
            attributes.update(message_attributes(request))
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        try:
            call = continuation(security.with_metadata(details, list(carrier.items())), request)
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.end()
            raise
        # Ends the span when the call ends: at once for a finished unary call,
        # when a stream is read to its end, fails or is cancelled.
        call.add_done_callback(lambda done: self._done(span, done))
        return call

    @staticmethod
    def _done(span: Any, call: grpc.Call) -> None:
        if span.is_recording():
            _set_code(span, call.code(), lambda code: code != grpc.StatusCode.OK)
            span.end()

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return self._traced(continuation, client_call_details, request, True)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return self._traced(continuation, client_call_details, request, True)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return self._traced(continuation, client_call_details, request_iterator, False)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return self._traced(continuation, client_call_details, request_iterator, False)


# -- servers ------------------------------------------------------------------------


class ServerTracing(grpc.ServerInterceptor):
    """A SERVER span per call, a child of the span in the caller's metadata
    (a new trace without one), current while the handler runs."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or security.is_open(handler_call_details.method):
            return handler
        metadata = {item.key: item.value for item in handler_call_details.invocation_metadata or ()}
        name, rpc = _rpc_attributes(handler_call_details.method)
        started = functools.partial(self._start, name, rpc, propagate.extract(metadata))
        if handler.unary_unary:
            return handler._replace(unary_unary=_unary(handler.unary_unary, started, True))
        if handler.stream_unary:
            return handler._replace(stream_unary=_unary(handler.stream_unary, started, False))
        if handler.unary_stream:
            return handler._replace(unary_stream=_stream(handler.unary_stream, started, True))
        return handler._replace(stream_stream=_stream(handler.stream_stream, started, False))

    def _start(self, name: str, rpc: dict[str, Any], parent: Any, request: Any, unary_request: bool):
        """The call's span and the context it is current in; a streamed request's
        ids are read from its first message (its header) as it arrives."""
        attributes = {**rpc, **(message_attributes(request) if unary_request else {})}
        span = self._tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes)
        if not unary_request:
            request = _tagging(span, request)
        return span, trace.set_span_in_context(span, parent), request


def _tagging(span: Any, requests: Iterator[Any]) -> Iterator[Any]:
    first = True
    for message in requests:
        if first:
            span.set_attributes(message_attributes(message))
            first = False
        yield message


def _finish(span: Any, context: grpc.ServicerContext, exc: BaseException | None = None) -> None:
    """Ends the span with the call's status (once: a stream's end may come twice)."""
    if not span.is_recording():
        return
    code = context.code()
    if exc is not None and code is None:  # escaped without an abort: gRPC answers UNKNOWN
        span.record_exception(exc)
        code = grpc.StatusCode.UNKNOWN
    elif code is None and not context.is_active():  # the caller went away, or its deadline passed
        remaining = context.time_remaining()
        code = (
            grpc.StatusCode.DEADLINE_EXCEEDED if remaining is not None and remaining <= 0 else grpc.StatusCode.CANCELLED
        )
    _set_code(span, code, SERVER_ERRORS.__contains__)
    span.end()


def _unary(behavior: Callable, started: Callable, unary_request: bool) -> Callable:
    def handler(request: Any, context: grpc.ServicerContext) -> Any:
        span, ctx, request = started(request, unary_request)
        token = otel_context.attach(ctx)
        try:
            reply = behavior(request, context)
        except BaseException as exc:
            _finish(span, context, exc)
            raise
        finally:
            otel_context.detach(token)
        span.set_attributes(message_attributes(reply))  # e.g. the document an upload created
        _finish(span, context)
        return reply

    return handler


def _stream(behavior: Callable, started: Callable, unary_request: bool) -> Callable:
    def handler(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        span, ctx, request = started(request, unary_request)
        # A stream the caller cancels may never be closed here: its end ends the span too.
        context.add_callback(lambda: _finish(span, context))
        replies = iter(behavior(request, context))
        try:
            while True:
                token = otel_context.attach(ctx)  # current for each step, not between them
                try:
                    reply = next(replies)
                except StopIteration:
                    break
                finally:
                    otel_context.detach(token)
                yield reply
        except GeneratorExit:  # gRPC closed the stream: the caller went away
            if span.is_recording():
                _set_code(span, grpc.StatusCode.CANCELLED, SERVER_ERRORS.__contains__)
                span.end()
            raise
        except BaseException as exc:
            _finish(span, context, exc)
            raise
        _finish(span, context)

    return handler
