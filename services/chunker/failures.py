"""What a client reads when a strategy or a bulk job fails in a way no check
foresaw (ADR 0050: no exception text reaches a client).

The exception and its trace go to the chunker's log under an incident id;
the client is told what failed, the id, and what to do.
"""

from __future__ import annotations

import logging

from chunklab.errors import logged


def reported(log: logging.Logger, what: str) -> str:
    """Logs the exception being handled under a new incident id; returns the
    sentence for the client. Call it from an `except` block."""
    incident = logged(log, what)
    return (
        f"{what} with an internal error (incident {incident}); the chunker log has the details. "
        "Try again, and report the incident if it fails again"
    )
