"""The evaluator in the test process behind a real gRPC server on port 0, its peers
faked by the test and its embeddings hashed (tests/support/providers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc

from chunklab import clients
from chunklab.db import make_sessionmaker
from chunklab.server import ErrorMappingInterceptor
from chunklab.v1 import evaluator_pb2_grpc
from services.evaluator.deps import RunnerDeps
from services.evaluator.judging.models import ModelDefaults
from services.evaluator.storage.repository import Repository
from services.evaluator.server import EvaluatorServicer
from services.evaluator.service import EvaluatorService
from services.evaluator.storage.tables import Base
from tests.support.providers import HashedProvider


@contextmanager
def serve_evaluator(peers, database_url: str, timeout_s: float, max_retries: int = 0,
                    **options) -> Iterator[evaluator_pb2_grpc.EvaluatorServiceStub]:
    """A client of the evaluator on the database at `database_url` (a SQLAlchemy URL);
    `options` are further RunnerDeps fields (judge_attempts, …)."""
    deps = RunnerDeps(
        repository=Repository(make_sessionmaker(database_url, Base)),
        peers=peers, provider_for=lambda name: HashedProvider(),
        defaults=ModelDefaults(base_url="", api_key="", model="", timeout_s=timeout_s, max_retries=max_retries),
        default_embedding_model=HashedProvider.name, code_version="test", **options,
    )
    server = grpc.server(futures.ThreadPoolExecutor(4), interceptors=[ErrorMappingInterceptor()])
    service = EvaluatorService(deps, max_upload_bytes=1_000_000, report_piece_bytes=1 << 20)
    evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(EvaluatorServicer(service), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield clients.evaluator(f"127.0.0.1:{port}")
    finally:
        server.stop(None)
        service.stop()  # as the real server's on_stop: experiments end, the lease renewer too

