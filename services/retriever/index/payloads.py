"""How a chunk is stored as a point: a few plain fields to filter on, and the
whole Chunk message serialized once.

Why this shape: converting payloads with json_format cost tens of
microseconds per chunk on every hit and every neighbour; decoding one
base64 protobuf is a few microseconds, and the filter fields stay readable
for Qdrant's payload indexes and for anyone looking at the collection.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass

import numpy as np

from chunklab import ids
from chunklab.v1 import common_pb2

# Keyword-indexed payload fields (ADR 0002, 0020).
KEYWORD_FIELDS = ("document_id", "strategy", "config_id", "collection", "language", "role", "set_state")
INTEGER_FIELDS = ("chunk_index",)
# "active" on the points of the active set of each (document, strategy), else
# "inactive": a query without a config_id matches the active ones (ADR 0038).
# A keyword, not a bool: Qdrant Edge 0.9 matches no boolean value.
SET_STATE_FIELD = "set_state"
ACTIVE, INACTIVE = "active", "inactive"
# Seconds since the epoch of the document's publication (falls back to
# ingestion, then indexing): the freshness window and recency decay use it.
TIME_FIELD = "published_ts"
CHUNK_FIELD = "chunk"
# Roles stored for lookup by id only: they have no vector and never match a search.
LOOKUP_ONLY_ROLES = frozenset({common_pb2.CHUNK_ROLE_PARENT})


@dataclass(frozen=True)
class Sparse:
    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class IndexPoint:
    """One point as any backend stores it. `dense` is None for lookup-only
    chunks (parents); `sparse` is the BM25 vector of what was embedded."""

    point_id: str
    payload: dict
    dense: list[float] | None = None
    sparse: Sparse | None = None


def published_ts(chunk: common_pb2.Chunk) -> float:
    for name in ("published_at", "ingested_at", "indexed_at"):
        if chunk.HasField(name):
            stamp = getattr(chunk, name)
            return stamp.seconds + stamp.nanos / 1e9
    return 0.0


def chunk_to_payload(chunk: common_pb2.Chunk, active: bool) -> dict:
    return {
        "document_id": chunk.document_id,
        "strategy": chunk.strategy,
        "config_id": chunk.config_id,
        "collection": chunk.collection,
        "language": chunk.language,
        "role": ids.role_name(chunk.role),
        "chunk_index": chunk.chunk_index,
        TIME_FIELD: published_ts(chunk),
        SET_STATE_FIELD: ACTIVE if active else INACTIVE,
        CHUNK_FIELD: base64.b64encode(chunk.SerializeToString(deterministic=True)).decode("ascii"),
    }


_ROLES_BY_NAME = {name: role for role, name in ids.ROLE_NAMES.items() if role}


def payload_to_chunk(payload: dict) -> common_pb2.Chunk:
    chunk = common_pb2.Chunk.FromString(base64.b64decode(payload[CHUNK_FIELD]))
    if not chunk.role:  # written before roles were an enum: the payload's name says it
        chunk.role = _ROLES_BY_NAME.get(payload.get("role", "chunk"), common_pb2.CHUNK_ROLE_CHUNK)
    return chunk


class NoDirection(ValueError):
    """A vector of zeros, or with NaN or inf: our sentence says so."""


def unit_vector(values) -> list[float]:
    """float32 and unit length: the index uses the dot product, so cosine
    similarity is computed once here and a stored vector is never changed by
    the store (archive and restore keep it byte-identical)."""
    vector = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise NoDirection("a vector of zeros (or with NaN/inf) has no direction")
    return (vector / np.float32(norm)).astype(np.float32).tolist()
