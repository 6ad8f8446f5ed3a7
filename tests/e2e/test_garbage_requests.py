"""Every RPC of every service, sent bytes that are no request at all and a request whose
string field is not UTF-8, on the real servers (the shared stack: a refused request
stores nothing), answers INVALID_ARGUMENT naming the RPC, the message type and, for the
string, the field (issue 31, ADR 0122); never the INTERNAL grpcio gives a request it
cannot deserialize. The RPCs are read from the contracts' descriptors, so a new RPC is
covered the day it is added."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor as d

from chunklab.rpc import channels
from chunklab.v1 import chunker_pb2, evaluator_pb2, ingest_pb2, retriever_pb2

pytestmark = pytest.mark.e2e

MODULES = {"ingest": ingest_pb2, "chunker": chunker_pb2, "retriever": retriever_pb2, "evaluator": evaluator_pb2}
# Eleven continuation bytes: a varint longer than protobuf allows, so no message type reads it.
GARBAGE = b"\xff" * 11
NOT_UTF8 = b"caf\xc3 \xff\xfe"
HOW_TO_SEND = "send a request built from ChunkLab's protos"


def rpcs() -> list[tuple[str, d.MethodDescriptor]]:
    return [
        (service, method)
        for service, module in MODULES.items()
        for descriptor in module.DESCRIPTOR.services_by_name.values()
        for method in descriptor.methods
    ]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def string_field(message: d.Descriptor, depth: int = 3) -> list[d.FieldDescriptor] | None:
    """The path to the first string field, the request's own before any nested one."""
    for field in message.fields:
        if field.type == d.FieldDescriptor.TYPE_STRING:
            return [field]
    if depth == 0:
        return None
    for field in message.fields:
        if field.message_type is not None and (inner := string_field(field.message_type, depth - 1)):
            return [field, *inner]
    return None


def with_bad_string(path: list[d.FieldDescriptor]) -> tuple[bytes, str]:
    """A request whose string at path is not UTF-8, and the field's name as a refusal gives it."""
    data = NOT_UTF8
    for field in reversed(path):
        data = _length_delimited(field.number, data)
    return data, ".".join(field.name + ("[0]" if field.is_repeated else "") for field in path)


def send(channel: grpc.Channel, service: str, method: d.MethodDescriptor, data: bytes) -> grpc.RpcError:
    """Sends data as the request (the first message of a request stream); the error it got."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    kind = ("stream" if method.client_streaming else "unary") + "_" + ("stream" if method.server_streaming else "unary")
    behaviour = getattr(channel, kind)(path)
    argument = iter([data]) if method.client_streaming else data
    try:
        reply = behaviour(argument, timeout=30)
        if method.server_streaming:
            list(reply)
    except grpc.RpcError as error:
        return error
    pytest.fail(f"{service}.{method.name} accepted bytes that are no {method.input_type.full_name}")


@pytest.fixture(scope="module")
def channels_by_service(stack):
    return {service: channels.channel(stack.addresses[service]) for service in MODULES}


def test_the_contracts_list_rpcs_of_every_kind():
    kinds = {(method.client_streaming, method.server_streaming) for _, method in rpcs()}
    assert len(rpcs()) >= 48
    assert (True, False) in kinds and (False, True) in kinds and (False, False) in kinds


@pytest.mark.parametrize("service, method", rpcs(), ids=[f"{s}.{m.name}" for s, m in rpcs()])
def test_garbage_and_a_string_that_is_not_utf8_are_refused_naming_the_rpc(channels_by_service, service, method):
    channel = channels_by_service[service]
    rpc = f"{method.containing_service.name}.{method.name}"

    error = send(channel, service, method, GARBAGE)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{rpc}: {error.code().name}: {error.details()}"
    assert error.details().startswith(f"{rpc}: "), error.details()
    assert f"cannot be read as a {method.input_type.full_name}" in error.details()
    assert "not a protobuf message" in error.details() and HOW_TO_SEND in error.details()

    path = string_field(method.input_type)
    if path is None:  # a request with no string field anywhere: the garbage above is its only case
        return
    data, name = with_bad_string(path)
    error = send(channel, service, method, data)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{rpc}: {error.code().name}: {error.details()}"
    assert error.details().startswith(f"{rpc}: "), error.details()
    assert f"field '{name}' is not valid UTF-8 text" in error.details()
