"""A task the retriever runs every so often in a thread of its own (the sweep, graph builds)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class Periodic:
    """Runs `task` every `interval_s` seconds until stopped. An exception is
    logged and the next round tries again; `stopping` is set from stop() on,
    so a long task can give up early."""

    def __init__(self, name: str, task: Callable[[], object], log: logging.Logger) -> None:
        self.name = name
        self._task = task
        self._log = log
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, interval_s: float) -> None:
        """Starts the rounds (interval_s <= 0: never)."""
        if interval_s <= 0 or self._thread is not None:
            return

        def loop() -> None:
            while not self.stopping.wait(interval_s):
                try:
                    self._task()
                except Exception:  # the next round tries again
                    self._log.exception("%s failed", self.name)

        self._thread = threading.Thread(target=loop, name=f"retriever-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
