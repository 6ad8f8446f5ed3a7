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

from chunklab.v1 import common_pb2

# Keyword-indexed payload fields (ADR 0002, 0020).
KEYWORD_FIELDS = ("document_id", "strategy", "config_id", "collection", "language", "role")
INTEGER_FIELDS = ("chunk_index",)
# Seconds since the epoch of the document's publication (falls back to
# ingestion, then indexing): the freshness window and recency decay use it.
TIME_FIELD = "published_ts"
CHUNK_FIELD = "chunk"
# Roles stored for lookup by id only: they have no vector and never match a search.
LOOKUP_ONLY_ROLES = frozenset({"parent"})


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


def chunk_to_payload(chunk: common_pb2.Chunk) -> dict:
    return {
        "document_id": chunk.document_id,
        "strategy": chunk.strategy,
        "config_id": chunk.config_id,
        "collection": chunk.collection,
        "language": chunk.language,
        "role": chunk.role or "chunk",
        "chunk_index": chunk.chunk_index,
        TIME_FIELD: published_ts(chunk),
        CHUNK_FIELD: base64.b64encode(chunk.SerializeToString(deterministic=True)).decode("ascii"),
    }


def payload_to_chunk(payload: dict) -> common_pb2.Chunk:
    return common_pb2.Chunk.FromString(base64.b64decode(payload[CHUNK_FIELD]))


def unit_vector(values) -> list[float]:
    """float32 and unit length: the index uses the dot product, so cosine
    similarity is computed once here and a stored vector is never changed by
    the store (archive and restore keep it byte-identical)."""
    vector = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise ValueError("a vector of zeros (or with NaN/inf) has no direction")
    return (vector / np.float32(norm)).astype(np.float32).tolist()
