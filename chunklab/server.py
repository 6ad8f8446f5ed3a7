"""What every ChunkLab gRPC server shares: health, reflection, error mapping,
message limits and a graceful shutdown on SIGTERM.

A service's own `server.py` builds its servicer and calls `serve(...)`.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from chunklab.errors import ServiceError
from chunklab.limits import cut

log = logging.getLogger("chunklab.server")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
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
    incident = uuid.uuid4().hex[:12]
    log.exception("internal error in %s (incident %s)", method, incident)
    context.abort(grpc.StatusCode.INTERNAL,
                  f"internal error in {method} (incident {incident}); the service log has the details")


def _already_aborted(context: grpc.ServicerContext) -> bool:
    return context.code() not in (None, grpc.StatusCode.OK)


def _wrap_unary(behavior: Callable, method: str) -> Callable:
    @functools.wraps(behavior)
    def handler(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return behavior(request, context)
        except Exception as exc:  # noqa: BLE001 - mapped to a status below
            if _already_aborted(context):
                raise
            _abort_for(exc, context, method)

    return handler


def _wrap_stream(behavior: Callable, method: str) -> Callable:
    @functools.wraps(behavior)
    def handler(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from behavior(request, context)
        except Exception as exc:  # noqa: BLE001 - mapped to a status below
            if _already_aborted(context):
                raise
            _abort_for(exc, context, method)

    return handler


class ErrorMappingInterceptor(grpc.ServerInterceptor):
    """Turns ServiceError into its status and any other escape into INTERNAL."""

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
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
    workers: int = 8,
    grace_s: float = 5.0,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Runs a server until SIGTERM or SIGINT, then drains and stops it.

    Prints `chunklab <name> listening on <host>:<port>` once it accepts calls,
    with the port the bind returned (so tests can bind port 0).
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name),
        interceptors=[ErrorMappingInterceptor()],
        options=CHANNEL_OPTIONS,
    )
    register(server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*service_full_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
         reflection.SERVICE_NAME],
        server,
    )
    host = address.rpartition(":")[0]
    port = server.add_insecure_port(address)
    if port == 0:
        sys.exit(f"chunklab {name}: cannot listen on {address} (is the port taken?)")
    server.start()
    for service in ["", *service_full_names]:
        health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)

    stopped = threading.Event()

    def _stop(signum: int, _frame: Any) -> None:
        log.info("%s: signal %s, draining for up to %.1fs", name, signum, grace_s)
        health_servicer.enter_graceful_shutdown()
        server.stop(grace_s).wait()
        stopped.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(f"chunklab {name} listening on {host}:{port}", flush=True)
    log.info("%s listening on %s:%d", name, host, port)
    server.wait_for_termination()
    stopped.wait(grace_s + 1)
    if on_stop is not None:
        on_stop()
    log.info("%s stopped", name)
