"""Deterministic ids: the same inputs always give the same id, so the
retriever can fetch a chunk's neighbours, windows and parents by id."""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("6f1c3f0e-8a5b-4c1e-9d7a-2b3c4d5e6f70")


def chunk_id(document_id: str, strategy: str, config_id: str, chunk_index: int, role: str = "chunk") -> str:
    """uuid5 of "<document_id>/<strategy>/<config_id>/<role>/<chunk_index>" in ChunkLab's namespace."""
    return ChunkIds(document_id, strategy, config_id, role)(chunk_index)


# The bits uuid5 sets: version 5 in the top of byte 6, the RFC 4122 variant
# in the top of byte 8 (counted in the 128-bit number, most significant first).
_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_SET = (0x5000 << 64) | (0x8000 << 48)


class ChunkIds:
    """chunk_id for many chunk indexes of one (document, strategy,
    configuration, role): the same uuid5 strings, with the hash of the
    shared prefix computed once (a document's chunks are numbered by the
    thousand, and uuid.uuid5 costs more than building the chunk)."""

    def __init__(self, document_id: str, strategy: str, config_id: str, role: str = "chunk") -> None:
        self._prefix = hashlib.sha1(_NAMESPACE.bytes + f"{document_id}/{strategy}/{config_id}/{role}/".encode())

    def __call__(self, chunk_index: int) -> str:
        digest = self._prefix.copy()
        digest.update(str(chunk_index).encode())
        x = "%032x" % (int.from_bytes(digest.digest()[:16], "big") & _CLEAR | _SET)
        return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"

