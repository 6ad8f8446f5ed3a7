"""Domain errors that cross the wire as precise gRPC status codes.

Service logic raises these; the server plumbing (chunklab.rpc.server) turns them
into `context.abort(code, message)`. Messages are shown to people: they say
what was wrong and what to do.
"""

from __future__ import annotations

import logging
import uuid

import grpc


class ServiceError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhausted(ServiceError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(ServiceError):
    code = grpc.StatusCode.UNAVAILABLE


class Cancelled(ServiceError):
    """The call ended (cancelled, past its deadline, or the server stopping)
    before its work was done: the work stops at its next step (ADR 0049)."""

    code = grpc.StatusCode.CANCELLED

    def __init__(self, message: str = "the call ended before its work was done") -> None:
        super().__init__(message)


# What an HTTP status from a provider means, said to a person (the body stays in the log).
_STATUS_MEANING = {
    400: "it refused the request",
    401: "it refused the API key",
    403: "it refused the API key",
    404: "it does not know the model or the address",
    408: "it timed out",
    413: "it refused the request as too large",
    422: "it refused the request",
    429: "it is rate limiting",
}


def status_meaning(status_code: int) -> str:
    """What an HTTP error status from a provider (an LLM, an embedding or rerank
    endpoint) means, in a few words, without its body."""
    if status_code in _STATUS_MEANING:
        return _STATUS_MEANING[status_code]
    if status_code >= 500:
        return "an error on its side"
    return "an unexpected status"


# Words gRPC itself uses when it cannot reach a server. An UNAVAILABLE without
# them is the service's own answer (e.g. "the answer model failed: ..."): the
# service is there, something behind it is not, and its sentence says what.
TRANSPORT_WORDS = (
    "failed to connect",
    "connection refused",
    "connection reset",
    "socket closed",
    "broken pipe",
    "dns resolution failed",
    "connections to all backends failing",
    "name resolution",
)


def said_by_grpc(code: grpc.StatusCode | None, details: str) -> bool:
    """Whether a failed call's details are gRPC's own words (the server was not
    reached, or not in time) rather than a sentence one of our services wrote."""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return True
    return code == grpc.StatusCode.UNAVAILABLE and any(w in details.lower() for w in TRANSPORT_WORDS)


def logged(log: logging.Logger, what: str, exc: BaseException | None = None) -> str:
    """Logs `exc` (by default the exception being handled), its text and trace, as
    `what` under a new 12-hex-digit incident id, and returns the id: the client is
    told `what` in our words and the id, never the exception's text (ADR 0079)."""
    incident = uuid.uuid4().hex[:12]
    log.error("%s (incident %s)", what, incident, exc_info=exc if exc is not None else True)
    return incident


def from_rpc_error(exc: grpc.RpcError, peer: str) -> ServiceError:
    """Maps a failed call to a peer into the error this service reports.

    A peer's INVALID_ARGUMENT or NOT_FOUND keeps its code; a peer that is down
    or too slow becomes UNAVAILABLE naming the peer; a peer that refuses this
    service's token is a misconfigured stack (FAILED_PRECONDITION).
    """
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = exc.details() if hasattr(exc, "details") else str(exc)
    passthrough = {
        grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
        grpc.StatusCode.NOT_FOUND: NotFound,
        grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
        grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
        grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    }
    if code in passthrough:
        return passthrough[code](f"{peer}: {details}")
    if code == grpc.StatusCode.UNAUTHENTICATED:  # the caller got in; this service's own token did not
        return FailedPrecondition(
            f"the {peer} service refused this service's token: give every service of the "
            f"stack the same CHUNKLAB_AUTH_TOKEN ({details})"
        )
    if said_by_grpc(code, details):  # gRPC's words go to the log, ours to the client (ADR 0079)
        logging.getLogger("chunklab.errors").warning(
            "the %s service is unreachable or too slow: %s: %s", peer, code.name, details
        )
        return Unavailable(
            f"the {peer} service is unreachable or too slow ({code.name}): check that it is "
            "running and that its address is right, then try again"
        )
    if code == grpc.StatusCode.UNAVAILABLE:  # the peer's own sentence says what is missing behind it
        return Unavailable(f"the {peer} service is unreachable or too slow ({code.name}): {details}")
    return ServiceError(f"the {peer} service failed ({code.name}): {details}")
