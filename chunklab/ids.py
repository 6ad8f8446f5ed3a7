"""Deterministic ids: the same inputs always give the same id, so the
retriever can fetch a chunk's neighbours, windows and parents by id."""

from __future__ import annotations

import hashlib
import uuid

from chunklab.v1 import common_pb2

_NAMESPACE = uuid.UUID("6f1c3f0e-8a5b-4c1e-9d7a-2b3c4d5e6f70")


# The role's name as chunk ids spell it (and as the retriever's payloads
# carry it): ids made before roles were an enum stay the same.
ROLE_NAMES = {
    common_pb2.CHUNK_ROLE_UNSPECIFIED: "chunk",
    common_pb2.CHUNK_ROLE_CHUNK: "chunk",
    common_pb2.CHUNK_ROLE_SENTENCE: "sentence",
    common_pb2.CHUNK_ROLE_CHILD: "child",
    common_pb2.CHUNK_ROLE_PARENT: "parent",
}


def role_name(role: int) -> str:
    """ "chunk", "sentence", "child" or "parent" (unspecified reads as chunk)."""
    return ROLE_NAMES[role]


def chunk_id(
    document_id: str, strategy: str, config_id: str, chunk_index: int, role: int = common_pb2.CHUNK_ROLE_CHUNK
) -> str:
    """uuid5 of "<document_id>/<strategy>/<config_id>/<role name>/<chunk_index>" in ChunkLab's namespace."""
    return ChunkIds(document_id, strategy, config_id, role)(chunk_index)


class ChunkIds:
    """chunk_id for many chunk indexes of one (document, strategy,
    configuration, role): the same uuid5 strings, with the hash of the
    shared prefix computed once (a document's chunks are numbered by the
    thousand, and uuid.uuid5 costs more than building the chunk)."""

    def __init__(
        self, document_id: str, strategy: str, config_id: str, role: int = common_pb2.CHUNK_ROLE_CHUNK
    ) -> None:
        name = role_name(role)
        self._prefix = hashlib.sha1(_NAMESPACE.bytes + f"{document_id}/{strategy}/{config_id}/{name}/".encode())

    def __call__(self, chunk_index: int) -> str:
        digest = self._prefix.copy()
        digest.update(str(chunk_index).encode())
        x = digest.hexdigest()
        # uuid5's bits, set on the hex digits: version 5 in digit 12, the RFC 4122 variant
        # (binary 10) in the top of digit 16.
        return f"{x[:8]}-{x[8:12]}-5{x[13:16]}-{_VARIANT[x[16]]}{x[17:20]}-{x[20:32]}"


_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
