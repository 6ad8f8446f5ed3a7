"""The evaluator in the test process behind a real gRPC server on port 0, its peers
faked by the test and its embeddings hashed (tests/support/providers.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc

from chunklab.db.sessions import make_sessionmaker
from chunklab.endpoints import OPEN, EndpointPolicy
from chunklab.rpc import channels
from chunklab.rpc.server import ErrorMappingInterceptor
from chunklab.v1 import common_pb2, documents_pb2, evaluator_pb2_grpc, retriever_pb2
from services.chunker.strategies import REGISTRY
from services.evaluator.deps import RunnerDeps
from services.evaluator.judging.models import ModelDefaults
from services.evaluator.server import EvaluatorServicer
from services.evaluator.service import EvaluatorService
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base
from tests.support.providers import HashedProvider
from tests.support.waiting import WAIT_S


@contextmanager
def serve_evaluator(
    peers, database_url: str, timeout_s: float, max_retries: int = 0, policy: EndpointPolicy = OPEN, **options
) -> Iterator[evaluator_pb2_grpc.EvaluatorServiceStub]:
    """A client of the evaluator on the database at `database_url` (a SQLAlchemy URL);
    `policy` the endpoints a request may name (CHUNKLAB_ALLOWED_ENDPOINTS); `options` are
    further RunnerDeps fields (judge_attempts, …)."""
    deps = RunnerDeps(
        repository=Repository(make_sessionmaker(database_url, Base)),
        peers=peers,
        provider_for=lambda name: HashedProvider(),
        defaults=ModelDefaults(
            base_url="", api_key="", model="", timeout_s=timeout_s, max_retries=max_retries, policy=policy
        ),
        default_embedding_model=HashedProvider.name,
        code_version="test",
        **options,
    )
    server = grpc.server(futures.ThreadPoolExecutor(4), interceptors=[ErrorMappingInterceptor()])
    service = EvaluatorService(deps, max_upload_bytes=1_000_000, report_piece_bytes=1 << 20)
    evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(EvaluatorServicer(service), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield channels.evaluator(f"127.0.0.1:{port}")
    finally:
        server.stop(None)
        service.stop()  # as the real server's on_stop: experiments end, the lease renewer too


class FakePeers:
    """The evaluator's peers: one retrieved chunk; documents that can hold their look-up."""

    def __init__(self) -> None:
        self.documents_looked_up: list[str] = []
        self.hold_lookup: int | None = None  # the look-up (1-based) that waits for `release`
        self.release = threading.Event()

    def retrieve(self, request):
        chunk = common_pb2.Chunk(
            chunk_id="c-1",
            document_id="d-1",
            document_name="guide.md",
            content="Chunking cuts documents into pieces.",
            end_char=36,
        )
        return retriever_pb2.RetrieveResponse(retrieved_chunks=[common_pb2.RetrievedChunk(chunk=chunk, score=1.0)])

    def list_strategies(self):
        return REGISTRY.infos()

    def list_documents(self):
        return []

    def get_document(self, document_id, full=False):
        self.documents_looked_up.append(document_id)
        if len(self.documents_looked_up) == self.hold_lookup:
            assert self.release.wait(WAIT_S)
        return documents_pb2.Document(document_id=document_id, name=f"{document_id}.md", content_hash="h")
