"""chunklab.rpc.tracing_grpc's interceptors on an in-process server and a
chunklab.rpc.channels channel, exporting to a real OTLP receiver: the status a
failed call leaves on each side, a traced stream that is still a call the
client can cancel, a streamed request's ids from its header, and a trace
carried into another thread."""

from __future__ import annotations

import threading
from concurrent import futures

import grpc
import pytest

from chunklab.errors import NotFound
from chunklab.rpc import channels, tracing
from chunklab.rpc.server import ErrorMappingInterceptor
from chunklab.settings import settings_from
from chunklab.v1 import (
    chunker_pb2,
    chunker_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from tests.support.otlp_receiver import Receiver

pytestmark = pytest.mark.integration

RETRIEVE, PROCESS = "chunklab.v1.RetrieverService/Retrieve", "chunklab.v1.ChunkerService/ProcessDocument"
CREATE = "chunklab.v1.IngestService/CreateDocument"


class Retriever(retriever_pb2_grpc.RetrieverServiceServicer):
    def Retrieve(self, request, context):
        if request.query == "missing":
            raise NotFound("no index set for fixed_size")
        if request.query == "crash":
            raise RuntimeError("a bug")
        return retriever_pb2.RetrieveResponse(embedding_model="all-MiniLM-L6-v2")


class Chunker(chunker_pb2_grpc.ChunkerServiceServicer):
    def __init__(self) -> None:
        self.ended = threading.Event()

    def ProcessDocument(self, request, context):  # progress until the caller goes away
        try:
            while context.is_active():
                yield chunker_pb2.ProcessDocumentEvent(progress=chunker_pb2.StrategyProgress(strategy="fixed_size"))
        finally:
            self.ended.set()


class Ingest(ingest_pb2_grpc.IngestServiceServicer):
    def CreateDocument(self, request_iterator, context):
        pieces = list(request_iterator)
        return ingest_pb2.CreateDocumentResponse(document={"document_id": f"doc-{len(pieces)}"})


@pytest.fixture(scope="module")
def traced():
    """A server and stubs with tracing on, and the receiver of their spans."""
    with Receiver() as receiver:
        settings = settings_from({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        assert tracing.start("test", settings)
        chunker = Chunker()
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=4),
            interceptors=[*tracing.server_interceptors(), ErrorMappingInterceptor()],
        )
        retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(Retriever(), server)
        chunker_pb2_grpc.add_ChunkerServiceServicer_to_server(chunker, server)
        ingest_pb2_grpc.add_IngestServiceServicer_to_server(Ingest(), server)
        address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        server.start()
        try:
            yield receiver, address, settings, chunker
        finally:
            tracing.stop()
            server.stop(0)


def flushed(receiver: Receiver, count: int) -> dict:
    """The spans sent so far (waiting for `count` of them), by (kind, name)."""
    tracing._tracing.provider.force_flush()
    spans = receiver.wait_for(lambda got: len(got) >= count)
    assert len(spans) == count, [(s.kind, s.name) for s in spans]
    return {(s.kind, s.name): s for s in spans}


@pytest.mark.parametrize(
    ("query", "code", "server_failed"),
    [
        ("missing", grpc.StatusCode.NOT_FOUND, False),  # the caller's doing: a refusal
        ("crash", grpc.StatusCode.INTERNAL, True),  # the server's: a bug
    ],
)
def test_a_failed_call_fails_the_client_span_and_the_servers_only_for_the_servers_fault(
    traced, query, code, server_failed
):
    receiver, address, settings, _ = traced
    receiver.clear()
    with pytest.raises(grpc.RpcError) as failed:
        channels.retriever(address, settings).Retrieve(retriever_pb2.RetrieveRequest(query=query), timeout=10)
    assert failed.value.code() == code
    spans = flushed(receiver, 2)
    client, server = spans[("CLIENT", RETRIEVE)], spans[("SERVER", RETRIEVE)]
    assert (client.attributes["rpc.grpc.status_code"], client.error) == (code.value[0], True)
    assert (server.attributes["rpc.grpc.status_code"], server.error) == (code.value[0], server_failed)
    assert server.parent_id == client.span_id and server.trace_id == client.trace_id


def test_a_traced_stream_is_still_a_call_the_client_cancels(traced):
    receiver, address, settings, chunker = traced
    receiver.clear()
    call = channels.chunker(address, settings).ProcessDocument(
        chunker_pb2.ProcessDocumentRequest(document_id="d1"), timeout=30
    )
    assert [next(call).progress.strategy for _ in range(3)] == ["fixed_size"] * 3
    call.cancel()
    assert call.code() == grpc.StatusCode.CANCELLED
    assert chunker.ended.wait(10)
    spans = flushed(receiver, 2)
    client, server = spans[("CLIENT", PROCESS)], spans[("SERVER", PROCESS)]
    assert (client.attributes["rpc.grpc.status_code"], client.error) == (1, True)
    assert (server.attributes["rpc.grpc.status_code"], server.error) == (1, False)
    assert client.attributes["chunklab.document_id"] == server.attributes["chunklab.document_id"] == "d1"


def test_a_streamed_upload_is_tagged_from_its_header_and_its_reply(traced):
    receiver, address, settings, _ = traced
    receiver.clear()
    header = ingest_pb2.UploadHeader(name="notes.md", collection="news", size_bytes=4)
    messages = [ingest_pb2.CreateDocumentRequest(header=header), ingest_pb2.CreateDocumentRequest(data=b"text")]
    reply = channels.ingest(address, settings).CreateDocument(iter(messages), timeout=10)
    assert reply.document.document_id == "doc-2"
    server = flushed(receiver, 2)[("SERVER", CREATE)]
    assert (server.attributes["chunklab.collection"], server.attributes["chunklab.document_id"]) == ("news", "doc-2")


def test_work_carried_into_a_thread_stays_in_the_trace(traced):
    receiver, address, settings, _ = traced
    receiver.clear()
    stub = channels.retriever(address, settings)
    with tracing.span("run experiment", experiment_id="e1"):
        work = tracing.carried(lambda: stub.Retrieve(retriever_pb2.RetrieveRequest(query="q"), timeout=10))
    thread = threading.Thread(target=work)  # started after the span ended, as a queued job is
    thread.start()
    thread.join()
    spans = flushed(receiver, 3)
    outer, client = spans[("INTERNAL", "run experiment")], spans[("CLIENT", RETRIEVE)]
    assert outer.attributes == {"chunklab.experiment_id": "e1"}
    assert client.parent_id == outer.span_id and spans[("SERVER", RETRIEVE)].parent_id == client.span_id
