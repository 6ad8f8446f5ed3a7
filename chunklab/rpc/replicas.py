"""Replicas of a service behind one address (ADR 0065).

A peer address is one `host:port`, whose name may resolve to every replica
(compose's service names do), or a comma-separated list of `ip:port`, one per
replica. `target` turns either into the target gRPC dials; the channel's
`round_robin` policy (chunklab.rpc.channels) spreads calls over every address.
Each server names its replica in the trailing metadata of every call
(`chunklab-replica`), so a client, grpcurl -v or a test can see where a call landed.
"""

from __future__ import annotations

import ipaddress
import os
import socket

import grpc

REPLICA_KEY = "chunklab-replica"
_KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def addresses(value: str) -> list[str]:
    """The `host:port` entries of a peer address, one or a comma-separated list."""
    return [part.strip() for part in value.split(",") if part.strip()]


def check_list(value: str) -> None:
    """A list names its replicas by IP address (gRPC's ipv4:/ipv6: targets take no names)."""
    entries = addresses(value)
    if len(entries) < 2:
        return
    for entry in entries:
        host = entry.rpartition(":")[0].strip("[]")
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(
                f"a list of replica addresses takes IP addresses (e.g. 127.0.0.1:50052,127.0.0.1:50062), "
                f"got the name {host!r}; for names, give one name that resolves to every replica"
            ) from None


def target(address: str) -> str:
    """What gRPC dials for a peer address: the address itself (one name, resolved
    to every replica by DNS), or an `ipv4:`/`ipv6:` list of every replica."""
    entries = addresses(address)
    if len(entries) < 2:
        return address
    scheme = "ipv6" if any(entry.startswith("[") for entry in entries) else "ipv4"
    return f"{scheme}:{','.join(entries)}"


def replica_name(configured: str) -> str:
    """This process's replica name: the configured one, else `host:pid`
    (in compose the host is the container's id, one per replica)."""
    return configured or f"{socket.gethostname()}:{os.getpid()}"


def process_gone(name: str | None) -> bool:
    """Whether a `host:pid[:…]` name is a process of this machine that no longer runs
    (work it held can be taken at once, without waiting for its lease)."""
    host, _, rest = (name or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it runs, as another user
        return False
    return False


class ReplicaInterceptor(grpc.ServerInterceptor):
    """Puts `chunklab-replica: <name>` in the trailing metadata of every call."""

    def __init__(self, name: str) -> None:
        self._metadata = ((REPLICA_KEY, name),)

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        kind = next(k for k in _KINDS if getattr(handler, k))
        behavior = getattr(handler, kind)

        def named(request, context):
            # Set first: it reaches the client even when the handler aborts.
            # A streaming handler's iterator is returned as it is.
            context.set_trailing_metadata(self._metadata)
            return behavior(request, context)

        return handler._replace(**{kind: named})


def replica_of(call) -> str:
    """The replica that answered a call (a `with_call` call or an RpcError), or ''."""
    for key, value in call.trailing_metadata() or ():
        if key == REPLICA_KEY:
            return value
    return ""
