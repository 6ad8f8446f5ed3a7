"""The threads experiments run on, apart from the calls that start them."""

from __future__ import annotations

import logging
import queue
import threading

from chunklab.rpc import tracing
from chunklab.v1 import evaluator_pb2

log = logging.getLogger("chunklab.evaluator")

# Experiments that run at once; more wait their turn. Each run searches its own
# index sets (ADR 0038), so they do not disturb each other or the active sets.
CONCURRENT_EXPERIMENTS = 2


class ExperimentWorker:
    """Runs experiments on a few threads of its own (CONCURRENT_EXPERIMENTS at
    once), in the order started.

    A run does not depend on the caller staying connected: events go to a
    queue that the RPC drains while it can.
    """

    def __init__(self, concurrency: int = CONCURRENT_EXPERIMENTS) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._concurrency = concurrency
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._busy = 0
        self._idle = threading.Condition(self._lock)
        self.active: set[str] = set()
        self.cancelled: set[str] = set()  # queued or running ones asked to stop
        # The latest progress event of each queued or running experiment (GetExperiment's `progress`).
        self.progress: dict[str, evaluator_pb2.ExperimentProgress] = {}

    def submit(self, experiment_id: str, job, finished=None) -> None:
        """Queues `job`; `finished` is called once the experiment has left `active`
        (then a resume, or a look at its lease, sees it ended)."""
        with self._lock:
            self.active.add(experiment_id)
            self._busy += 1
            if len(self._threads) < self._concurrency:
                thread = threading.Thread(target=self._loop, name=f"experiments-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()

        def traced() -> None:
            with tracing.span("run experiment", experiment_id=experiment_id):
                job()

        # The run's calls (processing, retrieval) belong to the trace of the call that started it.
        self._jobs.put((experiment_id, tracing.carried(traced), finished))

    def _loop(self) -> None:
        while True:
            experiment_id, job, finished = self._jobs.get()
            try:
                job()
            except Exception:  # the runner records failures; never kill the worker
                log.exception("experiment %s crashed", experiment_id)
            finally:
                with self._lock:
                    self.active.discard(experiment_id)
                    self.cancelled.discard(experiment_id)
                    self.progress.pop(experiment_id, None)
                    self._busy -= 1
                    self._idle.notify_all()
                if finished is not None:
                    finished()

    def cancel(self, experiment_id: str) -> bool:
        """Asks a queued or running experiment to stop; False when it is neither."""
        with self._lock:
            if experiment_id not in self.active:
                return False
            self.cancelled.add(experiment_id)
            return True

    def wait_idle(self, timeout: float) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)
