"""The client library's one error: a failed call told in words a person can act on."""

from __future__ import annotations

import logging

import grpc

from chunklab.errors import said_by_grpc


class ClientError(Exception):
    """A call that failed, or a request refused before any call.

    `message` is the sentence to show (never a traceback); `service` names the
    service called ("" when nothing was sent); `code` and `details` are the
    status and the service's own words, for callers that act on them."""

    def __init__(self, message: str, *, service: str = "", code: grpc.StatusCode | None = None, details: str = ""):
        super().__init__(message)
        self.message = message
        self.service = service
        self.code = code
        self.details = details

    @classmethod
    def from_rpc_error(cls, service: str, address: str, exc: grpc.RpcError) -> ClientError:
        """A service that cannot be reached (or is too slow), or that wants a
        token, is named with its address; otherwise the service's own sentence
        is kept, after its status."""
        code = exc.code() if hasattr(exc, "code") else None
        details = (exc.details() if hasattr(exc, "details") else "") or "no details given"
        name = code.name if code is not None else "UNKNOWN"
        if said_by_grpc(code, details):  # gRPC's own words: to the log, and in `details` (ADR 0079)
            logging.getLogger("chunklab.client").info("%s at %s: %s: %s", service, address, name, details)
            message = (
                f"The {service} service at {address} is unreachable or too slow ({name}): check that it is "
                "running and that the address is right"
            )
        elif code == grpc.StatusCode.UNAUTHENTICATED:  # the service's sentence says what to set
            message = f"The {service} service at {address} refused the call. {details}"
        else:
            message = f"{service} service: {name}: {details}"
        return cls(message, service=service, code=code, details=details)
