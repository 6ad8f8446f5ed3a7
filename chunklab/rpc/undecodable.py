"""Requests whose bytes are not the message their RPC takes (ADR 0122).

gRPC reads a request with the method's deserializer before any handler runs; when
that raises (garbage bytes, a string field that is not UTF-8) grpcio answers
INTERNAL "Exception deserializing request!", which tells the caller nothing and
blames the server. `tolerant` wraps a deserializer so that it never raises: it
returns an `Undecodable` holding a message a person can act on, naming the RPC
and, where the bytes let it be known, the field; the server's error mapping
(chunklab.rpc.server) answers it with INVALID_ARGUMENT.

The field is found by walking the protobuf wire format against the request's
descriptor: the first field whose bytes run past the end, or whose string is
not UTF-8, one level of nesting after another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

HOW_TO_SEND = "send a request built from ChunkLab's protos (chunklab/v1), with every string field UTF-8 text"


class Undecodable:
    """What a tolerant deserializer returns for bytes it could not read."""

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"Undecodable({self.message!r})"


class _Cut(Exception):
    """The bytes end inside a field, or a tag or length is not a varint."""


def rpc_name(method: str) -> str:
    """'/chunklab.v1.RetrieverService/Retrieve' -> 'RetrieverService.Retrieve'."""
    service, _, name = method.lstrip("/").partition("/")
    return f"{service.rpartition('.')[2]}.{name}" if name else method


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while shift < 70:
        if pos >= len(data):
            raise _Cut
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise _Cut


def _skip(data: bytes, pos: int, wire_type: int) -> tuple[int, int]:
    """(start, end) of a field's value of this wire type (for 2, its payload)."""
    if wire_type == 0:
        return pos, _varint(data, pos)[1]
    if wire_type in (1, 5):
        end = pos + (8 if wire_type == 1 else 4)
    elif wire_type == 2:
        length, pos = _varint(data, pos)
        end = pos + length
    else:
        raise _Cut  # groups (3, 4) are not used by ChunkLab's protos; 6 and 7 do not exist
    if end > len(data):
        raise _Cut
    return pos, end


def locate(descriptor: Descriptor | None, data: bytes, prefix: str = "") -> tuple[str, str]:
    """(field path, what is wrong with it) for the first field of data that cannot
    be read as descriptor says; ('', what) when the bytes go wrong before any known
    field; ('', '') when the walk finds nothing wrong."""
    pos, seen = 0, {}
    while pos < len(data):
        field_path = prefix
        try:
            tag, pos = _varint(data, pos)
            number, wire_type = tag >> 3, tag & 7
            field = descriptor.fields_by_number.get(number) if descriptor is not None else None
            if field is not None:
                index = seen.get(number, 0)
                seen[number] = index + 1
                field_path = f"{prefix}{field.name}" + (f"[{index}]" if field.is_repeated else "")
            if number == 0:
                raise _Cut
            start, pos = _skip(data, pos, wire_type)
        except _Cut:
            if field_path != prefix:
                return field_path, f"field '{field_path}' is cut short or malformed"
            inside = f" of field '{prefix[:-1]}'" if prefix else ""
            return prefix[
                :-1
            ], f"the bytes{inside} are not a protobuf message (a tag or a value is cut short or malformed)"
        if field is None or wire_type != 2:
            continue
        if field.type == FieldDescriptor.TYPE_STRING:
            try:
                data[start:pos].decode("utf-8")
            except UnicodeDecodeError:
                return field_path, f"field '{field_path}' is not valid UTF-8 text"
        elif field.message_type is not None:
            found = locate(field.message_type, data[start:pos], field_path + ".")
            if found[1]:
                return found
    return "", ""


def describe(method: str, descriptor: Descriptor | None, data: bytes, number: int = 0) -> str:
    """The refusal's message: the RPC, which message of a stream, the field where known, what to do
    (in our words: protobuf's own error text stays out of it, ADR 0079)."""
    _, what = locate(descriptor, data)
    if not what:
        what = "its bytes are not a valid encoding of that message"
    kind = descriptor.full_name if descriptor is not None else "its request message"
    which = f"message {number} of the request stream" if number else "the request"
    return f"{rpc_name(method)}: {which} cannot be read as a {kind}: {what}; {HOW_TO_SEND}."


def tolerant(deserialize: Callable[[bytes], Any], method: str, streamed: bool) -> Callable[[bytes], Any]:
    """deserialize, returning an Undecodable instead of raising."""
    owner = getattr(deserialize, "__self__", None)
    descriptor = getattr(owner, "DESCRIPTOR", None)
    if not isinstance(descriptor, Descriptor):
        descriptor = None
    count = [0]

    def read(data: bytes) -> Any:
        count[0] += 1
        try:
            return deserialize(data)
        except Exception:  # DecodeError, UnicodeDecodeError: whatever the bytes made it raise
            return Undecodable(describe(method, descriptor, data, count[0] if streamed else 0))

    return read
