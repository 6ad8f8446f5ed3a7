"""A Qdrant server or cluster through qdrant-client: one collection per
(embedding model, dimension), the same semantics as EdgeIndex.

Tests run it against qdrant-client's local mode (`QdrantClient(":memory:")`),
which speaks the server's client API; the server keeps its own HNSW index
and optimizer running in the background.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

from qdrant_client import QdrantClient, models

from services.retriever.index import conditions as c
from services.retriever.index.payloads import (
    ACTIVE,
    INACTIVE,
    INTEGER_FIELDS,
    KEYWORD_FIELDS,
    SET_STATE_FIELD,
    TIME_FIELD,
    IndexPoint,
    Sparse,
)
from services.retriever.index.vector_index import (
    DENSE,
    SPARSE,
    ReadWriteLock,
    StoredPoint,
    VectorIndex,
    other_sets,
    set_condition,
)

BATCH = 256


def to_filter(condition: c.Condition | None) -> models.Filter | None:
    if condition is None:
        return None
    converted = _convert(condition)
    return converted if isinstance(converted, models.Filter) else models.Filter(must=[converted])


def _convert(condition: c.Condition):
    if isinstance(condition, c.Match):
        values = list(condition.values)
        match = models.MatchValue(value=values[0]) if len(values) == 1 else models.MatchAny(any=values)
        return models.FieldCondition(key=condition.key, match=match)
    if isinstance(condition, c.Range):
        return models.FieldCondition(key=condition.key, range=models.Range(gte=condition.gte, lt=condition.lt))
    if isinstance(condition, c.All):
        return models.Filter(
            must=[_convert(x) for x in condition.must] or None,
            must_not=[_convert(x) for x in condition.must_not] or None,
        )
    if isinstance(condition, c.Any_):
        return models.Filter(should=[_convert(x) for x in condition.should])
    raise TypeError(f"not a condition: {condition!r}")


def _point(p: IndexPoint) -> models.PointStruct:
    vectors: dict = {}
    if p.dense is not None:
        vectors[DENSE] = p.dense
    if p.sparse is not None and p.sparse.indices:
        vectors[SPARSE] = models.SparseVector(indices=list(p.sparse.indices), values=list(p.sparse.values))
    return models.PointStruct(id=p.point_id, vector=vectors, payload=p.payload)


class QdrantServerIndex(VectorIndex):
    def __init__(self, client: QdrantClient, collection: str, dimension: int, replication_factor: int = 1) -> None:
        self._client = client
        self.collection = collection
        self.dimension = dimension
        self._lock = ReadWriteLock()
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.DOT)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams()},  # no IDF by the store: term_stats.py
                replication_factor=replication_factor,  # a cluster keeps this many copies of each shard
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode has no payload indexes, and says so
                for name in KEYWORD_FIELDS:
                    client.create_payload_index(collection, name, models.PayloadSchemaType.KEYWORD)
                for name in INTEGER_FIELDS:
                    client.create_payload_index(collection, name, models.PayloadSchemaType.INTEGER)
                client.create_payload_index(collection, TIME_FIELD, models.PayloadSchemaType.FLOAT)
        else:
            params = client.get_collection(collection).config.params
            size = params.vectors[DENSE].size
            if size != dimension:
                raise ValueError(f"collection {collection} holds {size}-dimensional vectors, not {dimension}")
            sparse = (params.sparse_vectors or {}).get(SPARSE)
            if sparse is not None and sparse.modifier == models.Modifier.IDF:  # made when the store applied IDF
                client.update_collection(
                    collection, sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.NONE)}
                )

    def _count(self, flt: models.Filter | None) -> int:
        return self._client.count(self.collection, count_filter=flt, exact=True).count

    def _upsert(self, points: list[IndexPoint]) -> None:
        for start in range(0, len(points), BATCH):
            self._client.upsert(self.collection, [_point(p) for p in points[start : start + BATCH]], wait=True)

    def replace(self, document_id: str, strategy: str, config_id: str, points: list[IndexPoint], activate: bool) -> int:
        old = to_filter(set_condition(document_id, strategy, config_id))
        with self._lock.write():
            replaced = self._count(old)
            if replaced:
                self._client.delete(self.collection, models.FilterSelector(filter=old), wait=True)
            if activate:
                self._deactivate(document_id, strategy, config_id)
            self._upsert(points)
        return replaced

    def _deactivate(self, document_id: str, strategy: str, config_id: str) -> None:
        others = to_filter(other_sets(document_id, strategy, config_id))
        self._client.set_payload(self.collection, {SET_STATE_FIELD: INACTIVE}, points=others, wait=True)

    def activate(self, document_id: str, strategy: str, config_id: str) -> None:
        with self._lock.write():
            self._deactivate(document_id, strategy, config_id)
            self._client.set_payload(
                self.collection,
                {SET_STATE_FIELD: ACTIVE},
                points=to_filter(set_condition(document_id, strategy, config_id)),
                wait=True,
            )

    def delete_set(self, document_id: str, strategy: str, config_id: str) -> int:
        return self._delete(set_condition(document_id, strategy, config_id))

    def upsert(self, points: list[IndexPoint]) -> None:
        with self._lock.write():
            self._upsert(points)

    def delete_document(self, document_id: str) -> int:
        return self._delete(c.match("document_id", document_id))

    def _delete(self, condition: c.Condition) -> int:
        flt = to_filter(condition)
        with self._lock.write():
            deleted = self._count(flt)
            if deleted:
                self._client.delete(self.collection, models.FilterSelector(filter=flt), wait=True)
        return deleted

    def _query(
        self, query, using: str, where: c.Condition | None, limit: int, exact: bool = False
    ) -> list[tuple[dict, float]]:
        with self._lock.read():
            found = self._client.query_points(
                self.collection,
                query=query,
                using=using,
                query_filter=to_filter(where),
                limit=limit,
                with_payload=True,
                search_params=models.SearchParams(exact=True) if exact else None,
            ).points
        return [(p.payload, p.score) for p in found]

    def search(
        self, vector: list[float], where: c.Condition | None, limit: int, exact: bool = False
    ) -> list[tuple[dict, float]]:
        return self._query(vector, DENSE, where, limit, exact)

    def search_lexical(self, query: Sparse, where: c.Condition | None, limit: int) -> list[tuple[dict, float]]:
        if not query.indices:
            return []
        sparse = models.SparseVector(indices=list(query.indices), values=list(query.values))
        return self._query(sparse, SPARSE, where, limit)

    def get(self, point_ids: list[str]) -> dict[str, dict]:
        if not point_ids:
            return {}
        with self._lock.read():
            records = self._client.retrieve(self.collection, point_ids, with_payload=True, with_vectors=False)
        return {str(r.id): r.payload for r in records}

    def scroll(self, where: c.Condition | None, with_vectors: bool = False) -> Iterator[StoredPoint]:
        offset = None
        flt = to_filter(where)
        while True:
            with self._lock.read():
                records, offset = self._client.scroll(
                    self.collection,
                    scroll_filter=flt,
                    limit=256,
                    offset=offset,
                    with_payload=True,
                    with_vectors=with_vectors,
                )
            yield from map(StoredPoint.from_record, records)
            if offset is None:
                return

    def count(self, where: c.Condition | None = None) -> int:
        with self._lock.read():
            return self._count(to_filter(where))

    def exists(self, where: c.Condition) -> bool:
        with self._lock.read():
            records, _ = self._client.scroll(
                self.collection, scroll_filter=to_filter(where), limit=1, with_payload=False, with_vectors=False
            )
        return bool(records)

    def oldest(self, where: c.Condition | None) -> float | None:
        with self._lock.read():
            records, _ = self._client.scroll(
                self.collection,
                scroll_filter=to_filter(where),
                limit=1,
                with_payload=True,
                with_vectors=False,
                order_by=models.OrderBy(key=TIME_FIELD, direction=models.Direction.ASC),
            )
        return float(records[0].payload[TIME_FIELD]) if records else None

    def disk_bytes(self) -> int:
        return 0

    def close(self) -> None:
        """The client is shared by every collection; the service closes it."""
