"""The retriever service's gRPC wiring: `python -m services.retriever`."""

from __future__ import annotations

import logging

from chunklab import embeddings, retrieval
from chunklab.embeddings import get_provider, warm_up_in_background
from chunklab.errors import InvalidArgument
from chunklab.rpc import limits, tracing
from chunklab.rpc.server import configure_logging, serve
from chunklab.settings import Settings, load_settings
from chunklab.v1 import retriever_pb2, retriever_pb2_grpc
from services.retriever.index.graph import GraphKeeper
from services.retriever.index.registry import IndexRegistry
from services.retriever.lifecycle.archive import ColdStorage
from services.retriever.lifecycle.journal import Journal
from services.retriever.lifecycle.sets import IndexSets, Retention
from services.retriever.lifecycle.sweeper import Sweeper
from services.retriever.search.rerank import RerankConfig, Rerankers
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore

log = logging.getLogger("chunklab.retriever")


@limits.bounded(retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"])
class RetrieverServicer(retriever_pb2_grpc.RetrieverServiceServicer):
    def __init__(self, service: RetrieverService, sweeper: Sweeper, sets: IndexSets) -> None:
        self._service = service
        self._sweeper = sweeper
        self._sets = sets

    def IndexChunks(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidArgument("an IndexChunks stream starts with a header message")
        chunks = []
        for message in request_iterator:
            if message.WhichOneof("part") != "batch":
                raise InvalidArgument("only the first message of an IndexChunks stream may be a header")
            chunks.extend(message.batch.chunks)
        indexed, replaced, active = self._service.index_chunks(first.header, chunks)
        return retriever_pb2.IndexChunksResponse(chunks_indexed=indexed, chunks_replaced=replaced, active=active)

    def DeleteDocumentChunks(self, request, context):
        deleted = self._service.delete_document(request.document_id, archived_chunks=self._sweeper.forget)
        return retriever_pb2.DeleteDocumentChunksResponse(chunks_deleted=deleted)

    def Retrieve(self, request, context):
        return self._service.retrieve(request)

    def GetRetrievalLimits(self, request, context):
        return retrieval.LIMITS

    def GetIndexStats(self, request, context):
        return self._service.stats(self._sweeper.archive_stats())

    def GetIndexedSet(self, request, context):
        return self._sets.get(request)

    def ListIndexedSets(self, request, context):
        return self._sets.list(request)

    def ListIndexedChunks(self, request, context):
        return self._sets.chunks(request)

    def ActivateIndexedSet(self, request, context):
        return self._sets.activate(request)

    def PinIndexedSet(self, request, context):
        return self._sets.pin(request)

    def DeleteIndexedSet(self, request, context):
        return self._sets.delete(request)

    def ListFreshnessWindows(self, request, context):
        return self._service.list_windows()

    def UpdateFreshnessWindow(self, request, context):
        return self._service.update_window(request.window)

    def Sweep(self, request, context):
        return self._sweeper.sweep(self._service.as_of(request.as_of), request.dry_run)

    def ListArchivedDocuments(self, request, context):
        return self._sweeper.list_archived(request.page_size, request.page_token)

    def RestoreDocument(self, request, context):
        return self._sweeper.restore(request.document_id)


def build(settings: Settings) -> tuple[RetrieverService, IndexSets, Sweeper]:
    """The service, its index sets and its sweeper as the settings say: Qdrant Edge under
    <data_dir>/retriever/edge unless a Qdrant server URL is set; the writes a
    killed process left unfinished settled (services/retriever/lifecycle/journal.py)."""
    root = settings.data_dir / "retriever"
    store = RetrieverStore(settings.database_url_for("retriever"), settings.db_busy_timeout_s)
    client = None
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        client = QdrantClient(
            url=settings.qdrant_url, api_key=settings.qdrant_api_key or None, timeout=int(settings.rpc_timeout_s)
        )
    registry = IndexRegistry(root / "edge", store, client, settings.qdrant_replication_factor)
    service = RetrieverService(
        registry,
        store,
        settings.embedding_model,
        get_provider,
        settings.freshness_windows,
        journal=Journal(root / "journal"),
        rerankers=Rerankers(RerankConfig.from_settings(settings)),
    )
    retention = Retention(settings.set_retention_days, int(settings.set_budget_mb * 1024**2))
    sets = IndexSets(service, retention)
    sweeper = Sweeper(service, ColdStorage(root / "archive"), sets)
    # Writes a killed process left half-done are undone or finished before anything is served.
    service.settle()
    sweeper.settle()
    return service, sets, sweeper


def one_thread_per_query_encode() -> None:
    """The retriever embeds one short question per call. With torch's default
    of one thread per core, OpenMP threads spin against the other processes on
    a busy machine: measured here, p95 753 ms with 2 threads against 35 ms
    with 1 for the same MiniLM question (ADR 0020)."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def main() -> None:
    configure_logging()
    settings = load_settings()
    tracing.start("retriever", settings)  # before any channel or server is made
    one_thread_per_query_encode()
    embeddings.configure(settings)  # "openai:" models learn their endpoint
    warm_up_in_background(settings.embedding_model)
    service, sets, sweeper = build(settings)
    log.info("retriever index: %s", f"Qdrant at {settings.qdrant_url}" if settings.qdrant_url else "Qdrant Edge")
    sweeper.start(settings.sweep_interval_s)
    graphs = GraphKeeper(service.registry, settings.hnsw_min_points, settings.hnsw_idle_s)
    graphs.start()
    servicer = RetrieverServicer(service, sweeper, sets)

    def stop() -> None:
        graphs.stop()
        sweeper.stop()
        service.close()

    serve(
        "retriever",
        settings.retriever_address,
        lambda server: retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(servicer, server),
        [retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name],
        settings=settings,
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
        on_stop=stop,
    )
