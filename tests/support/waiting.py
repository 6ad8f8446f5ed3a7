"""Waiting on a state, never on a time: a condition polled until it holds, with a generous
upper bound that only ends a test that would otherwise hang."""

from __future__ import annotations

import time

WAIT_S = 30.0  # generous: how long a test waits for the server to react, never a measured time


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)
