"""Work ends with its caller (ADR 0049): a call the client cancels mid-work
stops its server-side work. The evaluator runs in this process behind a real
gRPC server, its peers faked; its LLM is the fake OpenAI server, which writes
its answer one word at a time and says when the reader went away."""

from __future__ import annotations

import threading
from concurrent import futures

import grpc
import pytest

from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import NotFound
from chunklab.rpc import cancellation, channels
from chunklab.rpc.server import ErrorMappingInterceptor
from chunklab.v1 import (
    common_pb2,
    evaluator_pb2,
    evaluator_pb2_grpc,
)
from services.evaluator.deps import RunnerDeps
from services.evaluator.judging.models import ModelDefaults
from services.evaluator.server import EvaluatorServicer
from services.evaluator.service import EvaluatorService
from services.evaluator.storage.repository import Repository
from services.evaluator.storage.tables import Base
from tests.support.evaluator_server import FakePeers
from tests.support.fake_openai import FakeOpenAI
from tests.support.providers import HashedProvider
from tests.support.waiting import WAIT_S, wait_for

WORDS = 200


class Watched(EvaluatorServicer):
    """The servicer, telling the test when the server saw the call end and when its work returned."""

    def __init__(self, service: EvaluatorService) -> None:
        super().__init__(service)
        self.saw_the_end = threading.Event()
        self.returned = threading.Event()

    def RunExperiment(self, request, context):
        ended = cancellation.ended(context)
        context.add_callback(self.saw_the_end.set)  # after `ended`'s own callback: it is set by then
        try:
            yield from self._service.experiments.run(request, ended)
        finally:
            self.returned.set()


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        server.responder = lambda messages, model: " ".join(f"word{i}" for i in range(WORDS))
        server.word_delay_s = 0.2
        yield server


@pytest.fixture
def evaluator(database_url):
    """The evaluator on an empty database: each test runs on SQLite, then on PostgreSQL."""
    peers = FakePeers()
    deps = RunnerDeps(
        repository=Repository(make_sessionmaker(database_url, Base)),
        peers=peers,
        provider_for=lambda name: HashedProvider(),
        defaults=ModelDefaults(base_url="", api_key="", model="", timeout_s=60, max_retries=0),
        default_embedding_model=HashedProvider.name,
        code_version="test",
    )
    service = EvaluatorService(deps, max_upload_bytes=1_000_000, report_piece_bytes=1 << 20)
    servicer = Watched(service)
    server = grpc.server(futures.ThreadPoolExecutor(4), interceptors=[ErrorMappingInterceptor()])
    evaluator_pb2_grpc.add_EvaluatorServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield channels.evaluator(f"127.0.0.1:{port}"), service, servicer, peers
    server.stop(None)
    service.stop()  # as the real server's on_stop: experiments end, the lease renewer too


def test_a_cancelled_answer_stops_the_model_writing_and_stores_nothing(evaluator, fake):
    stub, service, _, _ = evaluator
    request = evaluator_pb2.AnswerRequest(
        question="What is chunking?",
        retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake"),
    )
    call = stub.Answer(request, timeout=120)
    context = next(call).context
    assert [c.chunk.chunk_id for c in context.retrieved_chunks] == ["c-1"]
    assert next(call).delta == "word0"
    call.cancel()

    wait_for(lambda: fake.calls and ("cut" in fake.calls[0] or "finished" in fake.calls[0]), "the LLM stream to end")
    stream = fake.calls[0]
    assert stream.get("cut") is True and "finished" not in stream
    assert stream["words_sent"] < WORDS
    with pytest.raises(NotFound):
        service._repo.query(context.query_id)  # an answer its asker never saw is not a query


def test_a_dry_run_cancelled_while_it_plans_stops_looking_documents_up(evaluator):
    stub, service, servicer, peers = evaluator
    question_set = service.sets.create(
        evaluator_pb2.CreateQuestionSetRequest(name="one", questions=[evaluator_pb2.Question(text="What is chunking?")])
    )
    documents = [f"doc-{i}" for i in range(100)]
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=documents)),
    )
    peers.hold_lookup = 2
    call = stub.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config, dry_run=True), timeout=120)
    wait_for(lambda: len(peers.documents_looked_up) == 2, "the second document look-up")
    call.cancel()
    assert servicer.saw_the_end.wait(WAIT_S)
    peers.release.set()

    assert servicer.returned.wait(WAIT_S)
    assert peers.documents_looked_up == ["doc-0", "doc-1"]
    with pytest.raises(grpc.RpcError) as err:
        list(call)
    assert err.value.code() == grpc.StatusCode.CANCELLED
