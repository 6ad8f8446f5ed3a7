"""Checks on retriever requests, each failing with a message a person can act on.

RetrievalOptions' bounds live in chunklab/retrieval.py (one owner, shared with
the evaluator and published by GetRetrievalLimits); what is checked here is
the rest of a RetrieveRequest, the freshness windows (their bound in
retrieval.LIMITS too, published with the others) and an IndexChunks stream,
whole, before it may replace a set (ADR 0123).
"""

from __future__ import annotations

from collections.abc import Sequence

from chunklab import ids, retrieval
from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2, retriever_pb2


def check_retrieve(request: retriever_pb2.RetrieveRequest) -> str:
    """Returns the query, stripped."""
    query = request.query.strip()
    if not query:
        raise InvalidArgument("the query is empty: ask a question")
    retrieval.check_options(request.options)
    if request.HasField("as_of") and request.as_of.seconds < 0:
        raise InvalidArgument("as_of is before 1970; leave it unset for now")
    return query


def check_window_days(days: int) -> None:
    most = retrieval.LIMITS.max_freshness_days
    if not 0 <= days <= most:
        raise InvalidArgument(f"max_age_days must be between 0 (unlimited) and {most}, got {days}")


def check_index_set(header: retriever_pb2.IndexHeader, chunks: Sequence[retriever_pb2.IndexedChunk]) -> None:
    """A set is replaced only by a complete, valid stream (ADR 0123): checked
    whole before anything is written, so a refused stream leaves the old set
    exactly as it was."""
    named = f"({header.document_id}, {header.strategy}, {header.config_id})"
    if not chunks:
        raise InvalidArgument(
            f"the IndexChunks stream for {named} has a header and no chunks; a set is replaced only by "
            "a stream that carries all of its chunks, so the set was left as it was"
        )
    if header.chunk_count and len(chunks) != header.chunk_count:
        raise InvalidArgument(
            f"the header of {named} promises {header.chunk_count} chunks and the stream carried "
            f"{len(chunks)}; resend the whole set (the set was left as it was)"
        )
    indexes: dict[int, set[int]] = {}
    for item in chunks:
        role = _check_chunk(header, item.chunk)
        seen = indexes.setdefault(role, set())
        if item.chunk.chunk_index in seen:
            raise InvalidArgument(f"chunk_index {item.chunk.chunk_index} ({ids.role_name(role)}) is sent twice")
        seen.add(item.chunk.chunk_index)
    for role, seen in indexes.items():
        _check_contiguous(ids.role_name(role), seen)
    _check_parents(header, chunks, indexes.get(common_pb2.CHUNK_ROLE_PARENT, set()))


def _check_chunk(header: retriever_pb2.IndexHeader, chunk: common_pb2.Chunk) -> int:
    """The chunk's role (unspecified read as chunk) once it is one of the header's set."""
    if chunk.document_id != header.document_id or chunk.strategy != header.strategy:
        raise InvalidArgument(
            f"chunk {chunk.chunk_index} belongs to ({chunk.document_id}, {chunk.strategy}), "
            f"not to the header's ({header.document_id}, {header.strategy})"
        )
    for field in ("config_id", "embedding_model"):
        value = getattr(chunk, field)
        if value and value != getattr(header, field):
            raise InvalidArgument(
                f"chunk {chunk.chunk_index} has {field} {value!r}, the header's set has "
                f"{getattr(header, field)!r}; send one set per stream"
            )
    if chunk.role not in ids.ROLE_NAMES:
        raise InvalidArgument(f"chunk {chunk.chunk_index} has role {chunk.role}, which is not a ChunkRole")
    role = chunk.role or common_pb2.CHUNK_ROLE_CHUNK
    if chunk.chunk_index < 0:
        raise InvalidArgument(
            f"chunk_index {chunk.chunk_index} ({ids.role_name(role)}) is negative; chunks are numbered from 0"
        )
    expected = ids.chunk_id(header.document_id, header.strategy, header.config_id, chunk.chunk_index, role)
    if chunk.chunk_id != expected:
        raise InvalidArgument(
            f"chunk {chunk.chunk_index} ({ids.role_name(role)}) has chunk_id {chunk.chunk_id!r}; in the set "
            f"{(header.document_id, header.strategy, header.config_id)} its id is {expected} "
            "(chunklab.ids.chunk_id)"
        )
    return role


def _check_contiguous(role: str, seen: set[int]) -> None:
    if len(seen) == max(seen) + 1:  # no duplicates, none negative: 0..n-1 exactly
        return
    missing = min(set(range(max(seen) + 1)) - seen)
    sent = sorted(seen)
    shown = ", ".join(map(str, sent[:8])) + (", …" if len(sent) > 8 else "")
    raise InvalidArgument(
        f"chunk_index {missing} of the {role} chunks is missing (the stream sent {shown}); each role's "
        "chunks are numbered from 0 without gaps and a set is replaced only by all of them"
    )


def _check_parents(
    header: retriever_pb2.IndexHeader, chunks: Sequence[retriever_pb2.IndexedChunk], parents: set[int]
) -> None:
    parent_ids = ids.ChunkIds(header.document_id, header.strategy, header.config_id, common_pb2.CHUNK_ROLE_PARENT)
    known = {parent_ids(i) for i in parents}
    for item in chunks:
        chunk = item.chunk
        if chunk.HasField("parent_id") and chunk.parent_id not in known:
            raise InvalidArgument(
                f"chunk {chunk.chunk_index} ({ids.role_name(chunk.role or common_pb2.CHUNK_ROLE_CHUNK)}) "
                f"names parent_id {chunk.parent_id!r}, which is no parent chunk sent in this stream"
            )
