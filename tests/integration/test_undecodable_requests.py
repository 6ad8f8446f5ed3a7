"""An unreadable request on a real gRPC server in this process, protected as
chunklab.rpc.server.serve protects one (ADR 0122): a caller without the token is told
about the token, not about its bytes; a stream whose second message is garbage is
refused naming that message, and the handler, which had read the header, stores nothing."""

from __future__ import annotations

from concurrent import futures

import grpc
import pytest

from chunklab.rpc import channels, security
from chunklab.rpc.server import CHANNEL_OPTIONS, ErrorMappingInterceptor
from chunklab.v1 import documents_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.fake_stubs import settings as base_settings

TOKEN = "garbage-test-token-0123456789abcdef"
CREATE = "/chunklab.v1.IngestService/CreateDocument"
GET = "/chunklab.v1.IngestService/GetDocument"


class Ingest(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(self) -> None:
        self.headers: list[str] = []
        self.stored: list[str] = []

    def CreateDocument(self, request_iterator, context):
        header = next(request_iterator).header
        self.headers.append(header.name)
        size = sum(len(piece.data) for piece in request_iterator)
        self.stored.append(header.name)
        return ingest_pb2.CreateDocumentResponse(document=documents_pb2.Document(name=header.name, size_bytes=size))


@pytest.fixture(scope="module")
def served():
    settings = base_settings().model_copy(update={"auth_token": TOKEN})
    server = grpc.server(
        futures.ThreadPoolExecutor(2),
        interceptors=[*security.server_interceptors(settings), ErrorMappingInterceptor()],
        options=CHANNEL_OPTIONS,
    )
    ingest = Ingest()
    ingest_pb2_grpc.add_IngestServiceServicer_to_server(ingest, server)
    port = security.add_port(server, "127.0.0.1:0", settings)
    server.start()
    yield f"127.0.0.1:{port}", settings, ingest
    server.stop(0)


def test_a_caller_without_the_token_is_told_about_the_token_not_its_bytes(served):
    address, settings, _ = served
    without = channels.channel(address, settings.model_copy(update={"auth_token": ""}))
    with pytest.raises(grpc.RpcError) as refused:
        without.unary_unary(GET)(b"\xff" * 11, timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert refused.value.details() == security.NO_TOKEN


def test_garbage_as_the_second_message_of_an_upload_is_refused_by_position_and_nothing_is_stored(served):
    address, settings, ingest = served
    header = ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(name="notes.md")).SerializeToString()
    upload = channels.channel(address, settings).stream_unary(CREATE)
    with pytest.raises(grpc.RpcError) as refused:
        upload(iter([header, b"\xff" * 11, b"\x12\x02hi"]), timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith(
        "IngestService.CreateDocument: message 2 of the request stream cannot be read as a "
        "chunklab.v1.CreateDocumentRequest: the bytes are not a protobuf message"
    )
    assert ingest.headers == ["notes.md"] and ingest.stored == []
    # The same upload, readable, is stored: the refusal was the bytes', not the server's.
    reply = ingest_pb2.CreateDocumentResponse.FromString(upload(iter([header, b"\x12\x02hi"]), timeout=10))
    assert (reply.document.name, reply.document.size_bytes) == ("notes.md", 2)
    assert ingest.stored == ["notes.md"]
