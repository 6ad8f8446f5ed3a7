"""Bulk loads through the message broker (SPEC section 7, ADR 0037).

`BulkLoads` checks a bulk load as ProcessDocument would, then queues one job
per document (broker.py, beside this file). `Worker`s, in any chunker replica, take jobs
off the queue, run them through the very ProcessDocument logic
(ChunkerService.process) and keep each job's result with its bulk load.
Knows nothing of gRPC.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager

from google.protobuf.message import DecodeError

from chunklab.errors import Cancelled, InvalidArgument, NotFound, ServiceError, Unavailable
from chunklab.rpc import tracing
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import chunker_pb2
from services.chunker.broker import Batch, Broker, Delivery, local_consumer
from services.chunker.failures import reported
from services.chunker.service import ChunkerService

log = logging.getLogger("chunklab.chunker.bulk")

# A worker holds a job this long; it renews the lease every quarter of it
# while the job runs, so only a worker that stopped loses its job.
LEASE_S = 120.0
# A job handed out this many times without finishing is given up (its
# worker stopped on it every time: it may be what stops them).
MAX_DELIVERIES = 3
# How long one wait for a job lasts before the worker checks it should stop.
WAIT_S = 1.0
# After the broker failed, wait this long before asking again.
BROKER_RETRY_S = 5.0
MAX_DOCUMENTS = 10_000
# ListBulkLoads: how many loads by default and at most.
DEFAULT_LISTED = 20
MAX_LISTED = 100


class BulkLoads:
    def __init__(self, service: ChunkerService, broker: Broker, document_exists: Callable[[str], None]) -> None:
        """`document_exists` raises NotFound for a document ingest does not hold."""
        self._service = service
        self.broker = broker
        self._document_exists = document_exists

    def submit(
        self, request: chunker_pb2.SubmitBulkLoadRequest, cancelled: threading.Event | None = None
    ) -> chunker_pb2.BulkLoad:
        """Checks and queues a bulk load; `cancelled` (the call ended) stops the
        check of its documents, one call to ingest each, before anything is queued."""
        documents = list(request.document_ids)
        if not documents:
            raise InvalidArgument("name at least one document to load (upload them first)")
        if len(documents) > MAX_DOCUMENTS:
            raise InvalidArgument(
                f"a bulk load takes at most {MAX_DOCUMENTS:,} documents; split the {len(documents):,} into several"
            )
        repeated = sorted(d for d, n in Counter(documents).items() if n > 1)
        if repeated:
            raise InvalidArgument(f"each document may appear once per bulk load; repeated: {', '.join(repeated)}")
        if request.HasField("llm") and request.llm.api_key:
            raise InvalidArgument(
                "a bulk load cannot carry an LLM api_key (its jobs wait in the message broker); "
                "configure the key on the chunker (CHUNKLAB_LLM_API_KEY)"
            )
        template = chunker_pb2.ProcessDocumentRequest(
            strategies=request.strategies, embedding_model=request.embedding_model
        )
        if request.HasField("llm"):
            template.llm.CopyFrom(request.llm)
        self._service.check(template)
        for document_id in documents:
            if cancelled is not None and cancelled.is_set():
                raise Cancelled("the bulk load was not queued: its call ended while its documents were checked")
            self._document_exists(document_id)
        bulk_load_id = uuid.uuid4().hex
        jobs = []
        for document_id in documents:
            job = chunker_pb2.BulkLoadJob(job_id=uuid.uuid4().hex, bulk_load_id=bulk_load_id, request=template)
            job.request.document_id = document_id
            jobs.append(job.SerializeToString())
        self.broker.submit(bulk_load_id, jobs)
        log.info("bulk load %s: %d documents queued on %s", bulk_load_id, len(jobs), self.broker.describe)
        return self.get(bulk_load_id)

    def get(self, bulk_load_id: str) -> chunker_pb2.BulkLoad:
        return self._load(bulk_load_id, self._batch(bulk_load_id), self.broker.queued())

    def recent(self, limit: int) -> chunker_pb2.ListBulkLoadsResponse:
        if not 0 <= limit <= MAX_LISTED:
            raise InvalidArgument(f"limit must be between 0 and {MAX_LISTED} (0 means {DEFAULT_LISTED})")
        queued = self.broker.queued()
        loads = [
            self._load(bulk_load_id, batch, queued)
            for bulk_load_id, batch in self.broker.recent_batches(limit or DEFAULT_LISTED)
        ]
        for load in loads:
            del load.results[:]
        return chunker_pb2.ListBulkLoadsResponse(bulk_loads=loads)

    def _load(self, bulk_load_id: str, batch: Batch, queued: int) -> chunker_pb2.BulkLoad:
        load = chunker_pb2.BulkLoad(
            bulk_load_id=bulk_load_id,
            jobs_total=batch.jobs_total,
            cancelled=batch.cancelled,
            broker=self.broker.describe,
            jobs_queued=queued,
        )
        load.submitted_at.FromSeconds(int(batch.submitted_at))
        seen: set[str] = set()
        for payload in self.broker.results(bulk_load_id):
            result = chunker_pb2.BulkLoadJobResult.FromString(payload)
            if result.job_id not in seen:  # a job delivered twice may report twice
                seen.add(result.job_id)
                load.results.append(result)
        load.jobs_finished = len(load.results)
        load.jobs_failed = sum(1 for r in load.results if r.error or r.result.strategies_failed)
        return load

    def cancel(self, bulk_load_id: str) -> chunker_pb2.BulkLoad:
        self._batch(bulk_load_id)
        self.broker.cancel(bulk_load_id)
        log.info("bulk load %s cancelled", bulk_load_id)
        return self.get(bulk_load_id)

    def _batch(self, bulk_load_id: str) -> Batch:
        if not bulk_load_id:
            raise InvalidArgument("name the bulk load (its bulk_load_id from SubmitBulkLoad)")
        batch = self.broker.batch(bulk_load_id)
        if batch is None:
            raise NotFound(f"no bulk load {bulk_load_id} (unknown, or submitted more than seven days ago)")
        return batch


class Worker:
    """Takes jobs off the broker one at a time until stopped."""

    def __init__(
        self,
        service: ChunkerService,
        broker: Broker,
        name: str | None = None,
        lease_s: float = LEASE_S,
        max_deliveries: int = MAX_DELIVERIES,
    ) -> None:
        self.name = name or local_consumer(uuid.uuid4().hex[:6])
        self._service = service
        self._broker = broker
        self._lease_s = lease_s
        self._max_deliveries = max_deliveries
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Worker:
        self._thread = threading.Thread(target=self._loop, name=f"bulk-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops taking jobs and cuts the current one short at its next step;
        a job cut short is given back to the broker, for another worker."""
        self._stop.set()

    def join(self, wait_s: float) -> None:
        if self._thread is not None:
            self._thread.join(wait_s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                delivery = self._broker.receive(self.name, self._lease_s, WAIT_S)
                if delivery is not None:
                    self.handle(delivery)
            except ServiceError as exc:
                log.warning("bulk worker %s: %s; trying again in %.0fs", self.name, exc.message, BROKER_RETRY_S)
                self._stop.wait(BROKER_RETRY_S)
            except Exception:  # a worker outlives any one job
                log.exception("bulk worker %s failed; trying again in %.0fs", self.name, BROKER_RETRY_S)
                self._stop.wait(BROKER_RETRY_S)

    def handle(self, delivery: Delivery) -> None:
        try:
            job = chunker_pb2.BulkLoadJob.FromString(delivery.payload)
        except DecodeError:
            log.error("bulk worker %s: message %s is not a BulkLoadJob; dropped", self.name, delivery.message_id)
            self._broker.ack(delivery)
            return
        result = chunker_pb2.BulkLoadJobResult(
            job_id=job.job_id, document_id=job.request.document_id, deliveries=delivery.deliveries, worker=self.name
        )
        if delivery.deliveries > 1 and self._finished(job):
            # Its worker stored the result and died before acknowledging it: the
            # job was done once, and is not run again (ADR 0065).
            log.info(
                "bulk job %s on %s was finished by a worker that stopped before acknowledging it; not run again",
                job.job_id,
                job.request.document_id,
            )
            self._broker.ack(delivery)
            return
        batch = self._broker.batch(job.bulk_load_id)
        if batch is not None and batch.cancelled:
            result.error = "cancelled before it ran (CancelBulkLoad)"
        elif delivery.deliveries > self._max_deliveries:
            result.error = (
                f"given up: the job was handed out {delivery.deliveries} times and each time its worker "
                "stopped or a service it needs was unreachable; see the chunker logs, then load the "
                "document again"
            )
        else:
            # One trace per job: the broker carries no caller's context.
            with (
                self._renewing(delivery),
                tracing.span("bulk load job", bulk_load_id=job.bulk_load_id, document_id=job.request.document_id),
            ):
                try:
                    for event in self._service.process(job.request, self._stop):
                        if event.HasField("result"):
                            result.result.CopyFrom(event.result)
                except Unavailable as exc:
                    # A peer (ingest, the embeddings endpoint) is down: neither finished
                    # nor failed. The job comes back when its lease runs out.
                    log.warning(
                        "bulk job %s on %s: %s; it is delivered again in %.0fs",
                        job.job_id,
                        job.request.document_id,
                        exc.message,
                        self._lease_s,
                    )
                    return
                except ServiceError as exc:
                    result.error = exc.message
                except Exception:  # reported with the job, the worker goes on
                    result.error = reported(log, f"bulk job {job.job_id} on document {job.request.document_id} failed")
            if not result.HasField("result") and not result.error:
                # Stopped part-way: the job goes back on the queue for another worker.
                self._broker.release(delivery, self.name)
                return
        result.finished_at.CopyFrom(to_proto(utcnow()))
        self._broker.put_result(job.bulk_load_id, result.SerializeToString())
        self._broker.ack(delivery)

    def _finished(self, job: chunker_pb2.BulkLoadJob) -> bool:
        return any(
            chunker_pb2.BulkLoadJobResult.FromString(payload).job_id == job.job_id
            for payload in self._broker.results(job.bulk_load_id)
        )

    @contextmanager
    def _renewing(self, delivery: Delivery):
        done = threading.Event()

        def renew() -> None:
            while not done.wait(self._lease_s / 4):
                try:
                    self._broker.renew(delivery, self.name, self._lease_s)
                except ServiceError as exc:
                    log.warning("bulk worker %s could not renew its lease: %s", self.name, exc.message)

        thread = threading.Thread(target=renew, name=f"lease-{self.name}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
