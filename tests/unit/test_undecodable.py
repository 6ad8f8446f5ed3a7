"""What a refusal of an unreadable request says (chunklab.rpc.undecodable, ADR 0122): the
RPC, the message type, and the field whose bytes are wrong, one level of nesting after
another and with a repeated field's position, so that the sender knows what to fix."""

from __future__ import annotations

import pytest

from chunklab.rpc.tracing_grpc import message_attributes
from chunklab.rpc.undecodable import Undecodable, describe, locate, tolerant
from chunklab.v1 import evaluator_pb2, ingest_pb2

NOT_UTF8 = "caf\udcc3".encode("utf-8", "surrogateescape")


def test_a_string_that_is_not_utf8_is_named_by_its_path_through_nested_and_repeated_fields():
    good = evaluator_pb2.Question(question_id="q1", text="What is chunking?")
    bad = evaluator_pb2.Question(question_id="q2", text="placeholder").SerializeToString()
    bad = bad.replace(b"placeholder", NOT_UTF8.ljust(len("placeholder"), b"!"))
    data = (
        evaluator_pb2.CreateQuestionSetRequest(name="set", questions=[good]).SerializeToString()
        + b"\x1a"
        + bytes([len(bad)])
        + bad
    )
    assert locate(evaluator_pb2.CreateQuestionSetRequest.DESCRIPTOR, data) == (
        "questions[1].text",
        "field 'questions[1].text' is not valid UTF-8 text",
    )


def test_a_field_cut_short_is_named_and_garbage_is_called_no_protobuf_message():
    whole = ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(name="notes.md")).SerializeToString()
    field, what = locate(ingest_pb2.CreateDocumentRequest.DESCRIPTOR, whole[:-3])
    assert field == "header" and "cut short" in what
    assert locate(ingest_pb2.CreateDocumentRequest.DESCRIPTOR, b"\xff" * 11)[1].startswith(
        "the bytes are not a protobuf message"
    )
    assert locate(ingest_pb2.CreateDocumentRequest.DESCRIPTOR, whole) == ("", "")


def test_the_refusal_names_the_rpc_the_type_the_stream_message_and_what_to_send():
    message = describe(
        "/chunklab.v1.IngestService/CreateDocument",
        ingest_pb2.CreateDocumentRequest.DESCRIPTOR,
        b"\x0a\x03\x0a\x01\xff",
        number=2,
    )
    assert message == (
        "IngestService.CreateDocument: message 2 of the request stream cannot be read as a "
        "chunklab.v1.CreateDocumentRequest: field 'header.name' is not valid UTF-8 text; "
        "send a request built from ChunkLab's protos (chunklab/v1), with every string field UTF-8 text."
    )


def test_a_tolerant_deserializer_never_raises_and_counts_the_messages_of_a_stream():
    read = tolerant(ingest_pb2.CreateDocumentRequest.FromString, "/chunklab.v1.IngestService/CreateDocument", True)
    assert read(b"\x12\x02hi").data == b"hi"
    refused = read(b"\xff" * 11)
    assert isinstance(refused, Undecodable)
    assert "message 2 of the request stream" in refused.message


@pytest.mark.parametrize("request_", [Undecodable("GetDocument: ..."), ingest_pb2.CreateDocumentRequest()])
def test_tracing_reads_no_ids_from_an_unreadable_or_empty_request(request_):
    assert message_attributes(request_) == {}
