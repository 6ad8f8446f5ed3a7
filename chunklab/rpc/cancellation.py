"""Work that ends with its caller (ADR 0049).

A handler's work runs in the server's thread while the call may end under it:
the client cancels, its deadline passes, or the server stops and cancels what
is left after its grace period. gRPC tells the call's context, not the work;
`ended(context)` turns that into a `threading.Event` that the service logic
(which knows nothing of gRPC) checks between its steps and passes down to its
loops, LLM streams and peer calls; work that sees it raises
`chunklab.errors.Cancelled`.
"""

from __future__ import annotations

import threading

import grpc


def ended(context: grpc.ServicerContext) -> threading.Event:
    """An event set once the call has ended, whichever way; set already if it has."""
    event = threading.Event()
    if not context.add_callback(event.set):
        event.set()
    return event
