"""The chunker service's gRPC wiring: `python -m services.chunker`."""

from __future__ import annotations

import logging

from chunklab import embeddings
from chunklab.embeddings import get_provider, warm_up_in_background
from chunklab.endpoints import EndpointPolicy
from chunklab.llm import ChatEndpoint
from chunklab.rpc import cancellation, limits, tracing
from chunklab.rpc.server import CLOSE_S, configure_logging, serve
from chunklab.settings import Settings, load_settings
from chunklab.v1 import chunker_pb2, chunker_pb2_grpc
from services.chunker.broker import open_broker
from services.chunker.bulk import BulkLoads, Worker
from services.chunker.cache import EmbeddingCache
from services.chunker.llm import LLMPool
from services.chunker.peers import GrpcPeers
from services.chunker.service import ChunkerService
from services.chunker.strategies import REGISTRY

log = logging.getLogger("chunklab.chunker")


@limits.bounded(chunker_pb2.DESCRIPTOR.services_by_name["ChunkerService"])
class ChunkerServicer(chunker_pb2_grpc.ChunkerServiceServicer):
    def __init__(self, service: ChunkerService, bulk: BulkLoads) -> None:
        self._service = service
        self._bulk = bulk

    def ListStrategies(self, request, context):
        return chunker_pb2.ListStrategiesResponse(
            strategies=REGISTRY.infos(),
            embedding_models=embeddings.available_models(),
            llm=self._service.describe_llm(),
        )

    # A caller that cancels or goes away stops the work at its next step.
    def ProcessDocument(self, request, context):
        yield from self._service.process(request, cancellation.ended(context))

    def PreviewChunks(self, request, context):
        return self._service.preview(request, cancellation.ended(context))

    def SubmitBulkLoad(self, request, context):
        return self._bulk.submit(request, cancellation.ended(context))

    def GetBulkLoad(self, request, context):
        return self._bulk.get(request.bulk_load_id)

    def CancelBulkLoad(self, request, context):
        return self._bulk.cancel(request.bulk_load_id)

    def ListBulkLoads(self, request, context):
        return self._bulk.recent(request.limit)


def build(settings: Settings) -> tuple[ChunkerService, BulkLoads]:
    """The service, and its bulk loads on the broker the settings name."""
    peers = GrpcPeers(settings)
    llm = LLMPool(
        ChatEndpoint(
            base_url=settings.llm_base_url.strip(),
            api_key=settings.llm_api_key,
            model=settings.llm_model,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        ),
        settings.llm_max_concurrency,
        EndpointPolicy.from_settings(settings),
    )
    cache = EmbeddingCache(
        settings.data_dir / "cache" / "embeddings.sqlite3",
        max_bytes=int(settings.embedding_cache_max_mb * 1e6),
        busy_timeout_s=settings.db_busy_timeout_s,
    )
    service = ChunkerService(peers.get_document, peers.index_chunks, get_provider, settings.embedding_model, cache, llm)
    broker = open_broker(settings.broker_url, settings.data_dir, settings.db_busy_timeout_s)
    return service, BulkLoads(service, broker, peers.check_document)


def main() -> None:
    configure_logging()
    settings = load_settings()
    tracing.start("chunker", settings)  # before any channel or server is made
    embeddings.configure(settings)
    warm_up_in_background(settings.embedding_model)
    service, bulk = build(settings)
    log.info("bulk loads: %s, %d worker(s) here", bulk.broker.describe, settings.bulk_workers)
    servicer = ChunkerServicer(service, bulk)
    workers = [Worker(service, bulk.broker).start() for _ in range(settings.bulk_workers)]

    def stop_workers() -> None:
        """At the signal: each worker cuts its job short at its next step and gives it back."""
        for worker in workers:
            worker.stop()

    def close() -> None:
        for worker in workers:
            worker.join(CLOSE_S / 2)
        bulk.broker.close()
        service.close()

    serve(
        "chunker",
        settings.chunker_address,
        lambda server: chunker_pb2_grpc.add_ChunkerServiceServicer_to_server(servicer, server),
        [chunker_pb2.DESCRIPTOR.services_by_name["ChunkerService"].full_name],
        settings=settings,
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
        on_signal=stop_workers,
        on_stop=close,
    )
