"""Index sets: one per (embedding model, document, strategy, configuration),
kept side by side; one of them active per (model, document, strategy)
(ADR 0038). Listing, activating, pinning and deleting them, and the
retention rule that keeps their disk bounded.

Retention: a set that is active or pinned is kept. Any other set is dropped
once it has not been used (indexed, or searched by its config_id) for
`retention_days`, and, while such sets hold more than `budget_bytes`, the
least recently used of them go first, except those used within the last
RECENT_S (an experiment that is running searches its sets all the time).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from chunklab import ids
from chunklab.errors import InvalidArgument, NotFound
from chunklab.knobs import dict_to_spec
from chunklab.retrieval import check_strategy
from chunklab.rpc.paging import check_page_size, decode_offset, decode_token, encode_token
from chunklab.timeutil import to_proto
from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever.index import conditions as c
from services.retriever.index.payloads import payload_to_chunk
from services.retriever.index.vector_index import set_condition
from services.retriever.service import RetrieverService
from services.retriever.store import SetKey

log = logging.getLogger("chunklab.retriever.sets")

# Sets used this recently are never dropped for the size budget.
RECENT_S = 3600.0
# ListIndexedChunks ends a page once its chunks pass this many bytes (at least
# one chunk a page): 1,000 parents of 32k tokens would not fit in a reply.
CHUNK_PAGE_BYTES = 4 * 1024 * 1024
# The roles in the order ListIndexedChunks gives them.
ROLE_ORDER = (
    common_pb2.CHUNK_ROLE_CHUNK,
    common_pb2.CHUNK_ROLE_SENTENCE,
    common_pb2.CHUNK_ROLE_CHILD,
    common_pb2.CHUNK_ROLE_PARENT,
)
_CHUNK_TOKEN = re.compile(r"([1-4])\.([0-9]{1,9})")


@dataclass(frozen=True)
class Retention:
    retention_days: float = 30.0
    budget_bytes: int = 2 * 1024**3


def to_message(found: dict) -> retriever_pb2.IndexedSet:
    indexed = retriever_pb2.IndexedSet(
        embedding_model=found["embedding_model"],
        document_id=found["document_id"],
        strategy=found["strategy"],
        config_id=found["config_id"],
        spec=dict_to_spec(found["spec"] or {}),
        points=found["points"],
        active=found["active"],
        pinned=found["pinned"],
        bytes=found["bytes"],
        expansion=found["expansion"],
        document_name=found["document_name"],
        collection=found["collection"],
    )
    for field in ("indexed_at", "last_used_at"):
        if found.get(field) is not None:
            getattr(indexed, field).CopyFrom(to_proto(found[field]))
    return indexed


def check_key(key: retriever_pb2.IndexedSetKey, *, config_required: bool = True) -> SetKey:
    fields = ("embedding_model", "document_id", "strategy") + (("config_id",) if config_required else ())
    for field in fields:
        if not getattr(key, field):
            raise InvalidArgument(f"name the index set's {field} (ListIndexedSets shows them)")
    return key.embedding_model, key.document_id, key.strategy, key.config_id


def _missing(key: SetKey) -> NotFound:
    model, document_id, strategy, config_id = key
    which = f"configuration {config_id}" if config_id else "an active set"
    return NotFound(
        f"document {document_id} has no {strategy} index set with {which} for {model} "
        "(or a sweep archived it); the Documents page lists each document’s index sets"
    )


class IndexSets:
    def __init__(self, service: RetrieverService, retention: Retention = Retention()) -> None:
        self.service = service
        self.retention = retention

    def get(self, request: retriever_pb2.GetIndexedSetRequest) -> retriever_pb2.IndexedSet:
        key = check_key(request.key, config_required=False)
        found = self.service.store.indexed_set(key)
        if found is None:
            raise _missing(key)
        return to_message(found)

    def list(self, request: retriever_pb2.ListIndexedSetsRequest) -> retriever_pb2.ListIndexedSetsResponse:
        size = check_page_size(request.page_size)
        offset = decode_offset(request.page_token)
        if request.strategy:  # a filter no set can match is refused, not answered with an empty page (ADR 0125)
            check_strategy(request.strategy)
        rows = self.service.store.list_sets(
            request.embedding_model, request.document_id, request.strategy, offset=offset, limit=size + 1
        )
        response = retriever_pb2.ListIndexedSetsResponse(sets=[to_message(r) for r in rows[:size]])
        if len(rows) > size:
            response.next_page_token = encode_token(offset + size)
        return response

    def chunks(self, request: retriever_pb2.ListIndexedChunksRequest) -> retriever_pb2.ListIndexedChunksResponse:
        """A page of one set's chunks, by role then chunk_index. The token is the
        (role, chunk_index) the next page starts at; a page reads only the points
        of its index ranges (one per role it reaches), through the chunk_index
        payload index."""
        key = check_key(request.key, config_required=False)
        size = check_page_size(request.page_size)
        start = _chunk_position(request.page_token)
        found = self._found(key)
        response = retriever_pb2.ListIndexedChunksResponse()
        if not found["points"]:
            return response
        index = self._index(found)
        in_set = set_condition(*key[1:3], found["config_id"])

        def of_role(role: int, *more: c.Condition) -> c.Condition:
            return c.All(must=(in_set, c.match("role", ids.role_name(role)), *more))

        roles = [r for r in ROLE_ORDER if (start is None or r >= start[0]) and index.exists(of_role(r))]
        first = start[1] if start is not None and roles and start[0] == roles[0] else 0
        held = 0
        for role in roles:
            room = size - len(response.chunks)
            if room == 0:  # the page is full where a role begins
                response.next_page_token = encode_token(f"{role}.0")
                return response
            window = of_role(role, c.Range("chunk_index", gte=first, lt=first + room))
            for chunk in sorted(
                (payload_to_chunk(p.payload) for p in index.scroll(window)), key=lambda k: k.chunk_index
            ):
                if response.chunks and held + chunk.ByteSize() > CHUNK_PAGE_BYTES:
                    response.next_page_token = encode_token(f"{role}.{chunk.chunk_index}")
                    return response
                held += chunk.ByteSize()
                response.chunks.append(chunk)
            if index.exists(of_role(role, c.Range("chunk_index", gte=first + room))):
                response.next_page_token = encode_token(f"{role}.{first + room}")
                return response
            first = 0
        return response

    def activate(self, request: retriever_pb2.ActivateIndexedSetRequest) -> retriever_pb2.IndexedSet:
        key = check_key(request.key)
        with self.service.document_lock(key[1]):
            found = self._found(key)
            index = self._index(found)
            # Two writes to the index and one to the records: journaled, so a failure or a kill
            # midway leaves the set active its records name, never none or two (ADR 0154).
            with self.service.journaled(key[0], found["dimension"], *key[1:]):
                index.activate(*key[1:])
                flagged = self.service.store.set_flags(key, active=True)
            return to_message(flagged)

    def pin(self, request: retriever_pb2.PinIndexedSetRequest) -> retriever_pb2.IndexedSet:
        key = check_key(request.key)
        found = self.service.store.set_flags(key, pinned=request.pinned)
        if found is None:
            raise _missing(key)
        return to_message(found)

    def delete(self, request: retriever_pb2.DeleteIndexedSetRequest) -> retriever_pb2.DeleteIndexedSetResponse:
        key = check_key(request.key)
        with self.service.document_lock(key[1]):
            deleted = self._delete(key, self._found(key))
        return retriever_pb2.DeleteIndexedSetResponse(chunks_deleted=deleted)

    def _found(self, key: SetKey) -> dict:
        found = self.service.store.indexed_set(key)
        if found is None:
            raise _missing(key)
        return found

    def _index(self, found: dict):
        """The vector index that holds a set (its model and dimension's)."""
        index = self.service.registry.get(found["embedding_model"], found["dimension"])
        if index is None:
            raise NotFound(f"the vector index of {found['embedding_model']} is gone; process the document again")
        return index

    def _delete(self, key: SetKey, found: dict) -> int:
        """Deletes a set's points and record (the caller holds its document's lock)."""
        model, document_id, strategy, config_id = key
        deleted = self._index(found).delete_set(document_id, strategy, config_id)
        self.service.store.delete_set(key)
        self.service.forget_config(model, strategy, config_id)
        return deleted

    # -- retention -------------------------------------------------------------

    def apply_retention(self, now: datetime) -> list[SetKey]:
        """Drops the sets the retention rule lets go; returns their keys."""
        candidates = self.service.store.retention_candidates()  # least recently used first
        expired_before = now - timedelta(days=self.retention.retention_days)
        recent_after = now - timedelta(seconds=RECENT_S)
        held = sum(s["bytes"] for s in candidates)
        dropped: list[SetKey] = []
        for found in candidates:
            used = _aware(found["last_used_at"], now)
            over_budget = held > self.retention.budget_bytes and used < recent_after
            if used >= expired_before and not over_budget:
                continue
            key = (found["embedding_model"], found["document_id"], found["strategy"], found["config_id"])
            with self.service.document_lock(key[1]):
                current = self.service.store.indexed_set(key)
                if current is None or current["active"] or current["pinned"]:
                    continue  # activated, pinned or deleted meanwhile
                self._delete(key, current)
            held -= found["bytes"]
            dropped.append(key)
        if dropped:  # the periodic task vacuums the indexes next
            log.info("retention dropped %d index sets", len(dropped))
        return dropped


def _chunk_position(token: str) -> tuple[int, int] | None:
    """The (role, chunk_index) a ListIndexedChunks token stands for; None for the first page."""
    value = decode_token(token)
    if not value:
        return None
    matched = _CHUNK_TOKEN.fullmatch(value)
    if matched is None:
        raise InvalidArgument("page_token is not one this service gave out; pass next_page_token unchanged")
    return int(matched[1]), int(matched[2])


def _aware(stamp: datetime, like: datetime) -> datetime:
    """SQLite hands datetimes back without their zone: they were written in UTC."""
    return stamp.replace(tzinfo=like.tzinfo) if stamp.tzinfo is None and like.tzinfo is not None else stamp
