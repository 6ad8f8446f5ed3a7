"""Authentication and TLS for every ChunkLab server and client (ADR 0048).

One shared token, sent as the standard `authorization: Bearer <token>`
metadata by every client and checked by a server interceptor on every RPC but
gRPC health and reflection; TLS from PEM files. Both come from the settings
(CHUNKLAB_AUTH_TOKEN, CHUNKLAB_TLS_CERT/KEY/CA) and are off when unset.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import ipaddress
from pathlib import Path

import grpc

from chunklab.settings import Settings

AUTH_KEY = "authorization"
# Probes and tools must reach these without a token: a load balancer's health
# check and grpcurl's discovery carry none.
OPEN_SERVICES = (
    "grpc.health.v1.Health",
    "grpc.reflection.v1alpha.ServerReflection",
    "grpc.reflection.v1.ServerReflection",
)
NO_TOKEN = "This ChunkLab stack needs a token: set CHUNKLAB_AUTH_TOKEN to the stack's token."
WRONG_TOKEN = (
    "The token sent is not this ChunkLab stack's: set CHUNKLAB_AUTH_TOKEN to the stack's token "
    "(sent as `authorization: Bearer <token>`)."
)


def token_matches(sent: str, token: str) -> bool:
    """Compares in constant time; hashing first hides the token's length too."""
    return hmac.compare_digest(hashlib.sha256(sent.encode()).digest(), hashlib.sha256(token.encode()).digest())


def is_open(method: str) -> bool:
    """Health and reflection: open to every caller, and left out of traces."""
    return method.lstrip("/").split("/", 1)[0] in OPEN_SERVICES


def _refusing(handler: grpc.RpcMethodHandler, message: str) -> grpc.RpcMethodHandler:
    """The same kind of handler, answering UNAUTHENTICATED before any work."""

    def refuse(_request, context: grpc.ServicerContext):
        context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    kind = next(k for k in ("unary_unary", "unary_stream", "stream_unary", "stream_stream") if getattr(handler, k))
    return handler._replace(**{kind: refuse})


class TokenInterceptor(grpc.ServerInterceptor):
    """Lets a call through only with `authorization: Bearer <token>` (health and reflection always)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or is_open(handler_call_details.method):
            return handler
        sent = [value for key, value in handler_call_details.invocation_metadata or () if key == AUTH_KEY]
        if not sent:
            return _refusing(handler, NO_TOKEN)
        scheme, _, token = sent[0].partition(" ")
        if len(sent) == 1 and scheme.lower() == "bearer" and token_matches(token.strip(), self._token):
            return handler
        return _refusing(handler, WRONG_TOKEN)


def server_interceptors(settings: Settings) -> list[grpc.ServerInterceptor]:
    return [TokenInterceptor(settings.auth_token)] if settings.auth_token else []


def add_port(server: grpc.Server, address: str, settings: Settings) -> int:
    """Binds address, with TLS when the settings give a certificate and key; returns the port."""
    if not settings.tls_cert:
        return server.add_insecure_port(address)
    key, cert = Path(settings.tls_key).read_bytes(), Path(settings.tls_cert).read_bytes()
    return server.add_secure_port(address, grpc.ssl_server_credentials([(key, cert)]))


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other hosts resolve, or a wildcard


def exposure_warning(what: str, host: str, settings: Settings) -> str:
    """A warning for a bind that others can reach without a token ('' when there is none)."""
    if settings.auth_token or is_loopback(host):
        return ""
    return (
        f"WARNING: chunklab {what} listens on {host or 'every interface'}, beyond loopback, without a token: "
        "anyone who can reach it can call it. Set CHUNKLAB_AUTH_TOKEN (and CHUNKLAB_TLS_CERT/KEY) "
        "to protect it."
    )


# -- clients ----------------------------------------------------------------------


class _CallDetails(
    collections.namedtuple(
        "_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")
    ),
    grpc.ClientCallDetails,
):
    pass


def with_metadata(details: grpc.ClientCallDetails, extra: tuple | list) -> grpc.ClientCallDetails:
    """The same call with `extra` (key, value) pairs added to its metadata (the token, a trace's context)."""
    return _CallDetails(
        details.method,
        details.timeout,
        [*(details.metadata or ()), *extra],
        details.credentials,
        details.wait_for_ready,
        details.compression,
    )


class BearerToken(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds `authorization: Bearer <token>` to every call of a channel, of every kind."""

    def __init__(self, token: str) -> None:
        self._metadata = ((AUTH_KEY, f"Bearer {token}"),)

    def _with_token(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        return with_metadata(details, self._metadata)

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._with_token(client_call_details), request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return continuation(self._with_token(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return continuation(self._with_token(client_call_details), request_iterator)


def open_channel(address: str, settings: Settings, options: list[tuple]) -> grpc.Channel:
    """A channel to address that speaks TLS when the settings say so and carries their token."""
    if settings.tls:
        roots = Path(settings.tls_ca).read_bytes() if settings.tls_ca else None
        channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=roots), options=options)
    else:
        channel = grpc.insecure_channel(address, options=options)
    if settings.auth_token:
        channel = grpc.intercept_channel(channel, BearerToken(settings.auth_token))
    return channel
