"""The front end's only door to the services: plain calls over the gRPC stubs.

Nothing here knows Gradio, so anything the UI does a script could do with the
same calls. Every call carries a deadline from the settings, and a failed call
becomes a `GatewayError` whose message a person can read (the status code's
name and the service's own words) instead of a gRPC traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chunklab import clients
from chunklab.settings import Settings
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2

# The contract's limit for one data message of an upload.
UPLOAD_PIECE_BYTES = 1024 * 1024
SERVICES = ("ingest", "chunker", "retriever", "evaluator")
# Words gRPC itself uses when it cannot reach a server. An UNAVAILABLE without
# them is the service's own answer (e.g. "the answer model failed: ..."): the
# service is there, something behind it is not, and its sentence says what.
_TRANSPORT_WORDS = (
    "failed to connect", "connection refused", "connection reset", "socket closed", "broken pipe",
    "dns resolution failed", "connections to all backends failing", "name resolution",
)


class GatewayError(Exception):
    """A call that failed, told in words a person can act on."""

    def __init__(self, message: str, *, service: str = "", code: grpc.StatusCode | None = None):
        super().__init__(message)
        self.message = message
        self.service = service
        self.code = code

    @classmethod
    def from_rpc_error(cls, service: str, address: str, exc: grpc.RpcError) -> GatewayError:
        code = exc.code() if hasattr(exc, "code") else None
        details = (exc.details() if hasattr(exc, "details") else "") or "no details given"
        name = code.name if code is not None else "UNKNOWN"
        unreachable = code == grpc.StatusCode.UNAVAILABLE and any(w in details.lower() for w in _TRANSPORT_WORDS)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED or unreachable:
            message = f"The {service} service at {address} is unreachable or too slow ({name}): {details}"
        else:
            message = f"{service} service: {name}: {details}"
        return cls(message, service=service, code=code)


@dataclass(frozen=True)
class ServiceHealth:
    """One row of the health page."""

    service: str
    address: str
    status: str  # SERVING, NOT_SERVING, ... or UNREACHABLE
    detail: str = ""


@dataclass
class Gateway:
    """The four services' stubs with the deadlines from one Settings object.

    Channels open lazily on first use: building a Gateway does no I/O.
    """

    settings: Settings
    _stubs: dict[str, Any] = field(default_factory=dict, repr=False)

    def address(self, service: str) -> str:
        return getattr(self.settings, f"{service}_address")

    def _stub(self, service: str) -> Any:
        if service not in self._stubs:
            self._stubs[service] = getattr(clients, service)(self.address(service))
        return self._stubs[service]

    @contextmanager
    def _calling(self, service: str) -> Iterator[None]:
        try:
            yield
        except grpc.RpcError as exc:
            raise GatewayError.from_rpc_error(service, self.address(service), exc) from None

    # -- ingest ---------------------------------------------------------------

    def list_documents(self, collection: str = "") -> list[documents_pb2.Document]:
        """Every document, all pages followed, in the order the service lists them."""
        documents: list[documents_pb2.Document] = []
        token = ""
        with self._calling("ingest"):
            while True:
                page = self._stub("ingest").ListDocuments(
                    ingest_pb2.ListDocumentsRequest(page_size=1000, page_token=token, collection=collection),
                    timeout=self.settings.rpc_timeout_s,
                )
                documents.extend(page.documents)
                token = page.next_page_token
                if not token:
                    return documents

    def upload_document(
        self, path: str, collection: str = "", name: str = "", language: str = ""
    ) -> ingest_pb2.CreateDocumentResponse:
        """Streams a file to CreateDocument: the header, then pieces of at most 1 MiB.

        An empty collection means "default" and an empty language means detect it.
        """
        name = name or os.path.basename(path)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise GatewayError(f"cannot read the uploaded file {name!r}: {exc.strerror}") from None
        header = ingest_pb2.UploadHeader(
            name=name, collection=collection.strip(), language=language.strip().lower(), size_bytes=size
        )
        with self._calling("ingest"):
            return self._stub("ingest").CreateDocument(
                _upload_messages(header, path), timeout=self.settings.rpc_timeout_s
            )

    def delete_document(self, document_id: str) -> int:
        """Deletes a document and its chunks; returns how many chunks left the index."""
        with self._calling("ingest"):
            response = self._stub("ingest").DeleteDocument(
                ingest_pb2.DeleteDocumentRequest(document_id=document_id), timeout=self.settings.rpc_timeout_s
            )
        return response.chunks_deleted

    def get_document_text(self, document_id: str) -> documents_pb2.Document:
        """The document with its canonical text (the FULL view), for the boundary viewer."""
        with self._calling("ingest"):
            return self._stub("ingest").GetDocument(
                ingest_pb2.GetDocumentRequest(document_id=document_id, view=documents_pb2.DOCUMENT_VIEW_FULL),
                timeout=self.settings.rpc_timeout_s,
            )

    # -- chunker --------------------------------------------------------------

    def strategy_catalog(self) -> chunker_pb2.ListStrategiesResponse:
        """Strategies with their knobs, and the embedding models the chunker can use."""
        with self._calling("chunker"):
            return self._stub("chunker").ListStrategies(
                chunker_pb2.ListStrategiesRequest(), timeout=self.settings.rpc_timeout_s
            )

    def indexed_set(
        self, document_id: str, strategy: str, embedding_model: str = "", config_id: str = ""
    ) -> retriever_pb2.IndexedSet | None:
        """A document's index set of the strategy (the active one unless config_id names
        another; the configured model by default); None if there is none."""
        request = retriever_pb2.GetIndexedSetRequest(key=retriever_pb2.IndexedSetKey(
            embedding_model=embedding_model or self.settings.embedding_model, document_id=document_id,
            strategy=strategy, config_id=config_id,
        ))
        try:
            return self._stub("retriever").GetIndexedSet(request, timeout=self.settings.rpc_timeout_s)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise GatewayError.from_rpc_error("retriever", self.address("retriever"), exc) from None

    def list_indexed_sets(self, strategy: str = "", document_id: str = "",
                          embedding_model: str = "") -> list[retriever_pb2.IndexedSet]:
        """Every index set of the strategy (and document), newest first per document."""
        sets: list[retriever_pb2.IndexedSet] = []
        request = retriever_pb2.ListIndexedSetsRequest(
            embedding_model=embedding_model or self.settings.embedding_model, strategy=strategy,
            document_id=document_id, page_size=1000,
        )
        with self._calling("retriever"):
            while True:
                page = self._stub("retriever").ListIndexedSets(request, timeout=self.settings.rpc_timeout_s)
                sets += page.sets
                if not page.next_page_token:
                    return sets
                request.page_token = page.next_page_token

    def _set_key(self, document_id: str, strategy: str, config_id: str) -> retriever_pb2.IndexedSetKey:
        return retriever_pb2.IndexedSetKey(embedding_model=self.settings.embedding_model, document_id=document_id,
                                           strategy=strategy, config_id=config_id)

    def activate_indexed_set(self, document_id: str, strategy: str, config_id: str) -> retriever_pb2.IndexedSet:
        with self._calling("retriever"):
            return self._stub("retriever").ActivateIndexedSet(retriever_pb2.ActivateIndexedSetRequest(
                key=self._set_key(document_id, strategy, config_id)), timeout=self.settings.rpc_timeout_s)

    def pin_indexed_set(self, document_id: str, strategy: str, config_id: str, pinned: bool) -> retriever_pb2.IndexedSet:
        with self._calling("retriever"):
            return self._stub("retriever").PinIndexedSet(retriever_pb2.PinIndexedSetRequest(
                key=self._set_key(document_id, strategy, config_id), pinned=pinned), timeout=self.settings.rpc_timeout_s)

    def delete_indexed_set(self, document_id: str, strategy: str, config_id: str) -> int:
        with self._calling("retriever"):
            return self._stub("retriever").DeleteIndexedSet(retriever_pb2.DeleteIndexedSetRequest(
                key=self._set_key(document_id, strategy, config_id)), timeout=self.settings.rpc_timeout_s).chunks_deleted

    def retrieval_limits(self) -> common_pb2.RetrievalLimits:
        with self._calling("retriever"):
            return self._stub("retriever").GetRetrievalLimits(
                retriever_pb2.GetRetrievalLimitsRequest(), timeout=self.settings.rpc_timeout_s
            )

    def list_strategies(self) -> list[chunker_pb2.StrategyInfo]:
        return list(self.strategy_catalog().strategies)

    def preview_chunks(
        self, document_id: str, strategy: common_pb2.StrategySpec, embedding_model: str = ""
    ) -> chunker_pb2.PreviewChunksResponse:
        """Chunks a document with one strategy without indexing (may embed or call an LLM: long deadline)."""
        request = chunker_pb2.PreviewChunksRequest(
            document_id=document_id, strategy=strategy, embedding_model=embedding_model
        )
        with self._calling("chunker"):
            return self._stub("chunker").PreviewChunks(request, timeout=self.settings.long_rpc_timeout_s)

    def process_document(
        self, document_id: str, strategies: Iterable[common_pb2.StrategySpec]
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        """Yields ProcessDocument's progress events; the last one holds the result."""
        request = chunker_pb2.ProcessDocumentRequest(document_id=document_id, strategies=list(strategies))
        with self._calling("chunker"):
            yield from self._stub("chunker").ProcessDocument(request, timeout=self.settings.long_rpc_timeout_s)

    def submit_bulk_load(
        self, document_ids: Iterable[str], strategies: Iterable[common_pb2.StrategySpec]
    ) -> chunker_pb2.BulkLoad:
        """Queues one job per document on the chunker's message broker; returns at once."""
        request = chunker_pb2.SubmitBulkLoadRequest(document_ids=list(document_ids), strategies=list(strategies))
        with self._calling("chunker"):
            return self._stub("chunker").SubmitBulkLoad(request, timeout=self.settings.rpc_timeout_s)

    def list_bulk_loads(self) -> list[chunker_pb2.BulkLoad]:
        """The most recent bulk loads, newest first, as summaries."""
        with self._calling("chunker"):
            return list(self._stub("chunker").ListBulkLoads(
                chunker_pb2.ListBulkLoadsRequest(), timeout=self.settings.rpc_timeout_s
            ).bulk_loads)

    def get_bulk_load(self, bulk_load_id: str) -> chunker_pb2.BulkLoad:
        with self._calling("chunker"):
            return self._stub("chunker").GetBulkLoad(
                chunker_pb2.GetBulkLoadRequest(bulk_load_id=bulk_load_id), timeout=self.settings.rpc_timeout_s
            )

    # -- retriever ------------------------------------------------------------

    def index_stats(self) -> retriever_pb2.GetIndexStatsResponse:
        with self._calling("retriever"):
            return self._stub("retriever").GetIndexStats(
                retriever_pb2.GetIndexStatsRequest(), timeout=self.settings.rpc_timeout_s
            )

    def list_freshness_windows(self) -> list[retriever_pb2.FreshnessWindow]:
        with self._calling("retriever"):
            response = self._stub("retriever").ListFreshnessWindows(
                retriever_pb2.ListFreshnessWindowsRequest(), timeout=self.settings.rpc_timeout_s
            )
        return list(response.windows)

    def update_freshness_window(self, collection: str, max_age_days: int) -> retriever_pb2.FreshnessWindow:
        window = retriever_pb2.FreshnessWindow(collection=collection, max_age_days=max_age_days)
        with self._calling("retriever"):
            return self._stub("retriever").UpdateFreshnessWindow(
                retriever_pb2.UpdateFreshnessWindowRequest(window=window), timeout=self.settings.rpc_timeout_s
            )

    def sweep(self, dry_run: bool, as_of: Timestamp | None = None) -> retriever_pb2.SweepResponse:
        """Archives expired documents (or, with dry_run, lists what would go); moving data takes the long deadline."""
        request = retriever_pb2.SweepRequest(dry_run=dry_run)
        if as_of is not None:
            request.as_of.CopyFrom(as_of)
        with self._calling("retriever"):
            return self._stub("retriever").Sweep(request, timeout=self.settings.long_rpc_timeout_s)

    def list_archived_documents(self) -> list[retriever_pb2.SweptDocument]:
        documents: list[retriever_pb2.SweptDocument] = []
        token = ""
        with self._calling("retriever"):
            while True:
                page = self._stub("retriever").ListArchivedDocuments(
                    retriever_pb2.ListArchivedDocumentsRequest(page_size=1000, page_token=token),
                    timeout=self.settings.rpc_timeout_s,
                )
                documents.extend(page.documents)
                token = page.next_page_token
                if not token:
                    return documents

    def restore_document(self, document_id: str) -> retriever_pb2.RestoreDocumentResponse:
        with self._calling("retriever"):
            return self._stub("retriever").RestoreDocument(
                retriever_pb2.RestoreDocumentRequest(document_id=document_id),
                timeout=self.settings.long_rpc_timeout_s,
            )

    # -- evaluator ------------------------------------------------------------

    def answer(self, request: evaluator_pb2.AnswerRequest) -> Iterator[evaluator_pb2.AnswerEvent]:
        """Yields the Answer stream: the context first, then pieces of the answer, then the result.

        The deadline covers a slow LLM writing a long answer, so it is the long one.
        """
        with self._calling("evaluator"):
            yield from self._stub("evaluator").Answer(request, timeout=self.settings.long_rpc_timeout_s)

    def submit_feedback(self, query_id: str, thumbs_up: bool, comment: str = "") -> evaluator_pb2.Feedback:
        request = evaluator_pb2.SubmitFeedbackRequest(query_id=query_id, thumbs_up=thumbs_up, comment=comment.strip())
        with self._calling("evaluator"):
            return self._stub("evaluator").SubmitFeedback(request, timeout=self.settings.rpc_timeout_s)

    def summarize_feedback(self) -> list[evaluator_pb2.FeedbackSummary]:
        with self._calling("evaluator"):
            response = self._stub("evaluator").SummarizeFeedback(
                evaluator_pb2.SummarizeFeedbackRequest(), timeout=self.settings.rpc_timeout_s
            )
        return list(response.strategies)

    def _every_page(self, method: str, request_type, field: str) -> list:
        """All items of an evaluator List RPC, page after page."""
        items: list = []
        token = ""
        with self._calling("evaluator"):
            while True:
                page = getattr(self._stub("evaluator"), method)(
                    request_type(page_size=1000, page_token=token), timeout=self.settings.rpc_timeout_s
                )
                items.extend(getattr(page, field))
                token = page.next_page_token
                if not token:
                    return items

    def list_question_sets(self) -> list[evaluator_pb2.QuestionSet]:
        return self._every_page("ListQuestionSets", evaluator_pb2.ListQuestionSetsRequest, "question_sets")

    def import_question_set(
        self, path: str, name: str = "", document_ids: dict[str, str] | None = None
    ) -> evaluator_pb2.QuestionSet:
        """Streams a JSONL or CSV file to ImportQuestionSet (the format follows the file's extension)."""
        file_name = os.path.basename(path)
        header = evaluator_pb2.ImportHeader(name=name.strip() or file_name, document_ids=document_ids or {})
        fmt = _QUESTION_FORMATS.get(os.path.splitext(file_name)[1].lower())
        if fmt is not None:
            header.format = fmt
        if not os.path.isfile(path):
            raise GatewayError(f"cannot read the question file {file_name!r}")
        with self._calling("evaluator"):
            # References are located in the documents' text: large sets take a while.
            return self._stub("evaluator").ImportQuestionSet(
                _import_messages(header, path), timeout=self.settings.long_rpc_timeout_s
            )

    def delete_question_set(self, question_set_id: str) -> None:
        """Refused (FAILED_PRECONDITION) while an experiment uses the set."""
        with self._calling("evaluator"):
            self._stub("evaluator").DeleteQuestionSet(
                evaluator_pb2.DeleteQuestionSetRequest(question_set_id=question_set_id),
                timeout=self.settings.rpc_timeout_s,
            )

    def resume_experiment(
        self, experiment_id: str, answer_api_key: str = "", judge_api_key: str = ""
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Continues an interrupted experiment with its stored configuration; the
        API keys, which are never stored, are given again."""
        keys = evaluator_pb2.ExperimentConfig()
        if answer_api_key.strip():
            keys.answer_model.api_key = answer_api_key.strip()
        if judge_api_key.strip():
            keys.judge_model.api_key = judge_api_key.strip()
        request = evaluator_pb2.RunExperimentRequest(resume_experiment_id=experiment_id, config=keys)
        with self._calling("evaluator"):
            yield from self._stub("evaluator").RunExperiment(request, timeout=self.settings.long_rpc_timeout_s)

    def cancel_experiment(self, experiment_id: str) -> evaluator_pb2.CancelExperimentResponse:
        """Asks a queued or running experiment to stop before its next question."""
        with self._calling("evaluator"):
            return self._stub("evaluator").CancelExperiment(
                evaluator_pb2.CancelExperimentRequest(experiment_id=experiment_id),
                timeout=self.settings.rpc_timeout_s,
            )

    def run_experiment(
        self, config: evaluator_pb2.ExperimentConfig, dry_run: bool = False
    ) -> Iterator[evaluator_pb2.ExperimentEvent]:
        """Yields RunExperiment's events: the estimate, progress, and last the experiment."""
        request = evaluator_pb2.RunExperimentRequest(config=config, dry_run=dry_run)
        timeout = self.settings.rpc_timeout_s if dry_run else self.settings.long_rpc_timeout_s
        with self._calling("evaluator"):
            yield from self._stub("evaluator").RunExperiment(request, timeout=timeout)

    def list_experiments(self) -> list[evaluator_pb2.Experiment]:
        return self._every_page("ListExperiments", evaluator_pb2.ListExperimentsRequest, "experiments")

    def get_experiment(
        self, experiment_id: str, run_key: str = "", without_results: bool = False
    ) -> evaluator_pb2.Experiment:
        request = evaluator_pb2.GetExperimentRequest(
            experiment_id=experiment_id, run_key=run_key, without_results=without_results
        )
        with self._calling("evaluator"):
            return self._stub("evaluator").GetExperiment(request, timeout=self.settings.rpc_timeout_s)

    def compare_experiments(self, experiment_ids: list[str]) -> evaluator_pb2.CompareExperimentsResponse:
        request = evaluator_pb2.CompareExperimentsRequest(experiment_ids=experiment_ids)
        with self._calling("evaluator"):
            return self._stub("evaluator").CompareExperiments(request, timeout=self.settings.rpc_timeout_s)

    def list_metrics(self) -> list[evaluator_pb2.MetricInfo]:
        """The evaluator's metric catalogue: unit and which direction is better, per metric."""
        with self._calling("evaluator"):
            return list(self._stub("evaluator").ListMetrics(
                evaluator_pb2.ListMetricsRequest(), timeout=self.settings.rpc_timeout_s).metrics)

    def get_report(self, experiment_id: str, view: int) -> evaluator_pb2.Report:
        request = evaluator_pb2.GetReportRequest(experiment_id=experiment_id, view=view)
        with self._calling("evaluator"):
            return self._stub("evaluator").GetReport(request, timeout=self.settings.rpc_timeout_s)

    # -- health ---------------------------------------------------------------

    def service_health(self) -> list[ServiceHealth]:
        """Each service's standard grpc.health.v1 answer for the whole server."""
        rows = []
        for service in SERVICES:
            address = self.address(service)
            # A fresh channel each time: a cached one could report a server
            # that has gone away as still connected for a while.
            with clients.channel(address) as channel:
                try:
                    reply = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=""), timeout=min(self.settings.rpc_timeout_s, 5.0)
                    )
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                    rows.append(ServiceHealth(service, address, status))
                except grpc.RpcError as exc:
                    rows.append(ServiceHealth(service, address, "UNREACHABLE", f"{exc.code().name}: {exc.details()}"))
        return rows


_QUESTION_FORMATS = {
    ".jsonl": evaluator_pb2.QUESTION_SET_FORMAT_JSONL,
    ".ndjson": evaluator_pb2.QUESTION_SET_FORMAT_JSONL,
    ".csv": evaluator_pb2.QUESTION_SET_FORMAT_CSV,
}


def _import_messages(header: evaluator_pb2.ImportHeader, path: str) -> Iterator[evaluator_pb2.ImportQuestionSetRequest]:
    yield evaluator_pb2.ImportQuestionSetRequest(header=header)
    with open(path, "rb") as file:
        while piece := file.read(UPLOAD_PIECE_BYTES):
            yield evaluator_pb2.ImportQuestionSetRequest(data=piece)


def _upload_messages(header: ingest_pb2.UploadHeader, path: str) -> Iterator[ingest_pb2.CreateDocumentRequest]:
    yield ingest_pb2.CreateDocumentRequest(header=header)
    with open(path, "rb") as file:
        while piece := file.read(UPLOAD_PIECE_BYTES):
            yield ingest_pb2.CreateDocumentRequest(data=piece)
