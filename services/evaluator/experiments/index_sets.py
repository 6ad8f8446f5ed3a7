"""Each run's index sets: one per document of the run's configuration and
embedding model, reused when it is there already, processed by the chunker
beside the active one otherwise (ADR 0038)."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable

from chunklab.errors import FailedPrecondition, Unavailable
from chunklab.v1 import evaluator_pb2, retriever_pb2
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan

log = logging.getLogger("chunklab.evaluator")


class IndexSets:
    def __init__(self, peers) -> None:
        self._peers = peers
        # One lock per (document, strategy, config_id, model) being processed: two
        # experiments that need the same set process it once, the second reuses it.
        self._sets_lock = threading.Lock()
        self._set_locks: dict[tuple[str, str, str, str], threading.Lock] = {}

    def ensure(
        self,
        cell: Cell,
        plan: Plan,
        run: evaluator_pb2.ExperimentRun,
        progress: Callable[..., None],
        check_stop: Callable[[], None],
    ) -> None:
        """Every document has an index set of this cell's configuration and
        embedding model: one already there (the user's, or an earlier
        experiment's) is reused; any other document is processed into a set of
        its own beside the active one, which stays as it is (ADR 0038). Each
        document processed is told by name, with how many are done. Only a set
        the retriever says is not there (NOT_FOUND) is processed: a retriever out
        of reach stops the experiment (Unavailable) rather than pass for a missing set."""
        model = plan.provider.name
        run.chunk_count = 0
        run.processing_seconds = 0.0
        run.characters_processed = 0
        run.ClearField("processing_phases")
        reused = 0
        total = len(plan.documents)
        for done, document_id in enumerate(plan.documents):
            with self._set_lock((document_id, cell.spec.name, cell.config_id, model)):
                name = plan.records[document_id].name
                indexed = self._indexed_set(model, document_id, name, cell)
                if indexed is not None:
                    reused += 1
                    run.chunk_count += indexed.points
                    continue
                told = functools.partial(progress, document_name=name, documents_done=done, documents_total=total)
                step = f"processing {name} with {cell.run_key} ({done + 1}/{total})"
                self._process(document_id, name, cell, model, run, step, told, check_stop)
                run.characters_processed += plan.records[document_id].character_count
        run.index_reused = reused == len(plan.documents)

    def _indexed_set(self, model: str, document_id: str, name: str, cell: Cell) -> retriever_pb2.IndexedSet | None:
        """The document's set of the cell's configuration; None only when the retriever says
        there is none (NOT_FOUND). A retriever out of reach is not a missing set: it stops
        the run, saying so, and nothing is processed again."""
        try:
            return self._peers.indexed_set(model, document_id, cell.spec.name, cell.config_id)
        except Unavailable as exc:
            log.warning("index set of %s (%s) not looked up: %s", document_id, cell.run_key, exc.message)
            raise Unavailable(
                f"the retriever is out of reach or too slow, so it is not known whether {name} already has an "
                f"index set of {cell.run_key}; nothing was processed again. Start the retriever (or check "
                "CHUNKLAB_RETRIEVER_ADDRESS), then resume the experiment"
            ) from None

    def _set_lock(self, key: tuple[str, str, str, str]) -> threading.Lock:
        with self._sets_lock:
            return self._set_locks.setdefault(key, threading.Lock())

    def _process(
        self,
        document_id: str,
        name: str,
        cell: Cell,
        model: str,
        run: evaluator_pb2.ExperimentRun,
        step: str,
        progress: Callable[[str], None],
        check_stop: Callable[[], None],
    ) -> None:
        """Indexes the run's own set of one document (never the active one), telling the
        step when it starts and then the chunker's progress at most once a second.
        A stop or cancel seen between the chunker's events ends the call, and with
        it the chunker's work."""
        progress(step)
        result = None
        last_report = 0.0
        events = self._peers.process(document_id, cell.spec, model)
        try:
            for event in events:
                check_stop()
                if event.HasField("result"):
                    result = event.result
                elif time.monotonic() - last_report > 1.0:
                    last_report = time.monotonic()
                    progress(f"{step}: {event.progress.message}")
        finally:
            getattr(events, "close", lambda: None)()  # a generator's close ends the call it streams
        if result is None:
            raise Unavailable("the chunker ended processing without a result")
        if result.strategies_failed:
            reason = result.strategies_failed[0].reason
            raise FailedPrecondition(f"{cell.spec.name} could not process {name}: {reason}")
        outcome = result.strategies_completed[0]
        run.chunk_count += outcome.chunk_count
        run.processing_seconds += outcome.seconds
        for phase in ("chunk_seconds", "embed_seconds", "index_seconds"):
            setattr(
                run.processing_phases, phase, getattr(run.processing_phases, phase) + getattr(outcome.phases, phase)
            )
        if outcome.config_id:
            run.config_id = run.retrieval.config_id = cell.config_id = outcome.config_id
