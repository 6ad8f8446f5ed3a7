"""What every ChunkLab gRPC server shares: health, reflection, error mapping,
message limits, the token check and TLS (chunklab.rpc.security) and a graceful
shutdown on SIGTERM that always ends the process; spans of every call
(chunklab.rpc.tracing) when the process turned tracing on.

A service's own `server.py` builds its servicer and calls `serve(...)`.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from chunklab.errors import ServiceError, logged
from chunklab.rpc import replicas, security, tracing
from chunklab.rpc.limits import cut
from chunklab.rpc.undecodable import Undecodable, tolerant
from chunklab.settings import Settings

log = logging.getLogger("chunklab.rpc.server")

# The one message-size limit, set on purpose for every server and every channel
# (chunklab.rpc.channels): above gRPC's 4 MB default receive limit so that a large
# document's FULL view or an experiment with its results fits in one reply;
# uploads and imports stream in pieces of 1 MiB.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# After the grace period for calls, closing (on_stop) gets this long; then the
# process exits whatever is still running (ADR 0049).
CLOSE_S = 3.0
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]


def _abort_for(exc: Exception, context: grpc.ServicerContext, method: str) -> None:
    """Aborts the call with the status that exc stands for (never UNKNOWN), its message
    cut to a size that always reaches the client. An unexpected error's text stays in
    the log under an incident id; the client is told the id, never the text."""
    if isinstance(exc, ServiceError):
        context.abort(exc.code, cut(exc.message))
    if not context.is_active():
        # The client went away (a reflection client closing its channel, a Ctrl-C) while the
        # handler read or wrote: nobody is left to tell, and it is no fault of the service.
        log.info("%s ended early: the client went away (%s)", method, type(exc).__name__)
        context.abort(grpc.StatusCode.CANCELLED, "the client went away")
    incident = logged(log, f"internal error in {method}")
    context.abort(
        grpc.StatusCode.INTERNAL, f"internal error in {method} (incident {incident}); the service log has the details"
    )


def _already_aborted(context: grpc.ServicerContext) -> bool:
    return context.code() not in (None, grpc.StatusCode.OK)


def _refuse_undecodable(request: Any, context: grpc.ServicerContext) -> Any:
    """A request (or a stream of them) as the handler gets it: an Undecodable one
    refused with INVALID_ARGUMENT before the handler sees it, a stream's at the
    message where it comes."""
    if isinstance(request, Undecodable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, cut(request.message))
    if isinstance(request, Iterator):
        return _refusing_stream(request, context)
    return request


def _refusing_stream(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
    for request in requests:
        if isinstance(request, Undecodable):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, cut(request.message))
        yield request


def _wrap_unary(behavior: Callable, method: str) -> Callable:
    @functools.wraps(behavior)
    def handler(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return behavior(_refuse_undecodable(request, context), context)
        except Exception as exc:  # mapped to a status below
            if _already_aborted(context):
                raise
            _abort_for(exc, context, method)

    return handler


def _wrap_stream(behavior: Callable, method: str) -> Callable:
    @functools.wraps(behavior)
    def handler(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from behavior(_refuse_undecodable(request, context), context)
        except Exception as exc:
            if _already_aborted(context):
                raise
            _abort_for(exc, context, method)

    return handler


class ErrorMappingInterceptor(grpc.ServerInterceptor):
    """Turns ServiceError into its status and any other escape into INTERNAL; a
    request whose bytes cannot be read into INVALID_ARGUMENT naming the RPC and the
    field where it can be known (chunklab.rpc.undecodable, ADR 0122), never the
    INTERNAL grpcio answers a failing deserializer with."""

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        if handler.request_deserializer is not None:
            streamed = bool(handler.stream_unary or handler.stream_stream)
            handler = handler._replace(request_deserializer=tolerant(handler.request_deserializer, method, streamed))
        if handler.unary_unary:
            return handler._replace(unary_unary=_wrap_unary(handler.unary_unary, method))
        if handler.stream_unary:
            return handler._replace(stream_unary=_wrap_unary(handler.stream_unary, method))
        if handler.unary_stream:
            return handler._replace(unary_stream=_wrap_stream(handler.unary_stream, method))
        if handler.stream_stream:
            return handler._replace(stream_stream=_wrap_stream(handler.stream_stream, method))
        return handler


def configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def serve(
    name: str,
    address: str,
    register: Callable[[grpc.Server], None],
    service_full_names: list[str],
    *,
    settings: Settings,
    workers: int = 8,
    grace_s: float = 5.0,
    on_signal: Callable[[], None] | None = None,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Runs a server until SIGTERM or SIGINT, then drains and stops it.

    Prints `chunklab <name> listening on <host>:<port>` once it accepts calls,
    with the port the bind returned (so tests can bind port 0). The settings'
    token and TLS files protect it (ADR 0048). On the signal, `on_signal`
    tells background work to stop while calls in flight get `grace_s` to
    finish; calls still running then are cancelled (their handlers see it
    through the call's context), `on_stop` closes what the service holds, and
    the process is gone by `grace_s + CLOSE_S` at the latest, even if a
    handler is stuck in work it cannot be told to stop.
    """
    if len(replicas.addresses(address)) > 1:
        sys.exit(
            f"chunklab {name}: {address} lists several addresses (what its clients dial, ADR 0065); "
            f"a server listens on one: give this replica its own CHUNKLAB_{name.upper()}_ADDRESS"
        )
    replica = replicas.replica_name(settings.replica_name)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name),
        interceptors=[
            *tracing.server_interceptors(),
            replicas.ReplicaInterceptor(replica),
            *security.server_interceptors(settings),
            ErrorMappingInterceptor(),
        ],
        options=CHANNEL_OPTIONS,
    )
    register(server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*service_full_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
        server,
    )
    host = address.rpartition(":")[0]
    if warning := security.exposure_warning(name, host, settings):
        log.warning("%s", warning)
    port = security.add_port(server, address, settings)
    if port == 0:
        sys.exit(f"chunklab {name}: cannot listen on {address} (is the port taken?)")
    server.start()
    for service in ["", *service_full_names]:
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)

    signalled = threading.Event()

    def _stop(signum: int, _frame: Any) -> None:
        if signalled.is_set():
            log.info("%s: signal %s again; already stopping", name, signum)
            return
        signalled.set()
        log.info("%s: signal %s, draining for up to %.1fs, gone within %.1fs", name, signum, grace_s, grace_s + CLOSE_S)
        # A daemon thread: it outlives the main thread and the interpreter's
        # join of the threads still at work, which is where a stuck handler
        # or pool worker would otherwise keep the process alive.
        watchdog = threading.Timer(grace_s + CLOSE_S, _give_up, args=(name,))
        watchdog.daemon = True
        watchdog.start()
        health_servicer.enter_graceful_shutdown()
        if on_signal is not None:
            on_signal()
        server.stop(grace_s)

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(f"chunklab {name} listening on {host}:{port}", flush=True)
    log.info("%s listening on %s:%d as replica %s", name, host, port, replica)
    server.wait_for_termination()
    if on_stop is not None:
        on_stop()
    tracing.stop()
    log.info("%s stopped", name)


def _give_up(name: str) -> None:
    """Exits at once (os._exit: no thread is joined), with the logs flushed.
    Every record is committed when it is written, so a call that finished
    stored everything; work still in flight ends as if its caller had gone."""
    busy = sorted(t.name for t in threading.enumerate() if t is not threading.current_thread())
    log.warning(
        "%s: still busy at the shutdown deadline (threads: %s); exiting without waiting for them",
        name,
        ", ".join(busy[:12]) + (" ..." if len(busy) > 12 else ""),
    )
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
