"""Qdrant Edge, in-process: one shard per (embedding model, dimension).

Edge runs no background optimizer, and `EdgeShard.optimize()` holds the
GIL for as long as it runs (measured here: 15 s at 20,000 points and 137 s
at 100,000 when it builds HNSW), which would freeze every gRPC call. So the
shard never builds HNSW (indexing_threshold 0): searches are exact over the
points the payload indexes select, and `maintain()` only vacuums deleted
points, which takes under a second at 20,000 (ADR 0020).

EdgeShard is safe to call from several threads; a ReadWriteLock still makes
a (document, strategy) replacement appear all at once to queries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from qdrant_edge import (
    CountRequest,
    Direction,
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    MatchAny,
    MatchValue,
    Memory,
    Modifier,
    OrderBy,
    PayloadSchemaType,
    Point,
    Query,
    QueryRequest,
    RangeFloat,
    ScrollRequest,
    SparseVector,
    UpdateOperation,
)

from services.retriever import conditions as c
from services.retriever.index import DENSE, SPARSE, ReadWriteLock, StoredPoint, VectorIndex
from services.retriever.payloads import INTEGER_FIELDS, KEYWORD_FIELDS, TIME_FIELD, IndexPoint, Sparse

BATCH = 512
# Vacuum when this share of the points are deleted ones (Qdrant's default).
VACUUM_SHARE = 0.2
VACUUM_MIN = 1000


def to_filter(condition: c.Condition | None) -> Filter | None:
    if condition is None:
        return None
    converted = _convert(condition)
    return converted if isinstance(converted, Filter) else Filter(must=[converted])


def _convert(condition: c.Condition):
    if isinstance(condition, c.Match):
        values = list(condition.values)
        match = MatchValue(values[0]) if len(values) == 1 else MatchAny(any=values)
        return FieldCondition(key=condition.key, match=match)
    if isinstance(condition, c.Range):
        return FieldCondition(key=condition.key, range=RangeFloat(gte=condition.gte, lt=condition.lt))
    if isinstance(condition, c.All):
        return Filter(
            must=[_convert(x) for x in condition.must] or None,
            must_not=[_convert(x) for x in condition.must_not] or None,
        )
    if isinstance(condition, c.Any_):
        return Filter(should=[_convert(x) for x in condition.should])
    raise TypeError(f"not a condition: {condition!r}")


def _point(p: IndexPoint) -> Point:
    vectors: dict = {}
    if p.dense is not None:
        vectors[DENSE] = p.dense
    if p.sparse is not None and p.sparse.indices:
        vectors[SPARSE] = SparseVector(indices=list(p.sparse.indices), values=list(p.sparse.values))
    return Point(p.point_id, vectors, p.payload)


class EdgeIndex(VectorIndex):
    sole_writer = True  # one process opens a shard

    def __init__(self, path: Path, dimension: int) -> None:
        self.path = path
        self.dimension = dimension
        self._lock = ReadWriteLock()
        self._deleted_since_vacuum = 0
        if (path / "edge_config.json").exists():
            self._shard = EdgeShard.load(str(path))
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._shard = EdgeShard.create(
                str(path),
                EdgeConfig(
                    vectors={DENSE: EdgeVectorParams(size=dimension, distance=Distance.Dot)},
                    sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)},
                    optimizers=EdgeOptimizersConfig(indexing_threshold=0),
                    payload_memory=Memory.Cached,
                ),
            )
            for name in KEYWORD_FIELDS:
                self._shard.update(UpdateOperation.create_field_index(name, PayloadSchemaType.Keyword))
            for name in INTEGER_FIELDS:
                self._shard.update(UpdateOperation.create_field_index(name, PayloadSchemaType.Integer))
            self._shard.update(UpdateOperation.create_field_index(TIME_FIELD, PayloadSchemaType.Float))
            self._shard.flush()

    # -- writes -----------------------------------------------------------

    def _upsert(self, points: list[IndexPoint]) -> None:
        for start in range(0, len(points), BATCH):
            self._shard.update(UpdateOperation.upsert_points([_point(p) for p in points[start : start + BATCH]]))

    def replace(self, document_id: str, strategy: str, points: list[IndexPoint]) -> int:
        old = to_filter(c.All(must=(c.match("document_id", document_id), c.match("strategy", strategy))))
        with self._lock.write():
            replaced = self._shard.count(CountRequest(exact=True, filter=old))
            if replaced:
                self._shard.update(UpdateOperation.delete_points_by_filter(old))
            self._upsert(points)
            self._shard.flush()
            self._deleted_since_vacuum += replaced
            self.generation += 1
        return replaced

    def upsert(self, points: list[IndexPoint]) -> None:
        with self._lock.write():
            self._upsert(points)
            self._shard.flush()
            self.generation += 1

    def delete_document(self, document_id: str) -> int:
        flt = to_filter(c.match("document_id", document_id))
        with self._lock.write():
            deleted = self._shard.count(CountRequest(exact=True, filter=flt))
            if deleted:
                self._shard.update(UpdateOperation.delete_points_by_filter(flt))
                self._shard.flush()
                self._deleted_since_vacuum += deleted
                self.generation += 1
        return deleted

    def maintain(self) -> None:
        with self._lock.write():
            points = self._shard.info().points_count
            if self._deleted_since_vacuum >= max(VACUUM_MIN, VACUUM_SHARE * points):
                self._shard.optimize()
                self._deleted_since_vacuum = 0

    # -- reads ------------------------------------------------------------

    def search(self, vector: list[float], where: c.Condition | None, limit: int) -> list[tuple[dict, float]]:
        request = QueryRequest(limit=limit, query=Query.Nearest(vector, using=DENSE), filter=to_filter(where),
                               with_payload=True)
        with self._lock.read():
            found = self._shard.query(request)
        return [(p.payload, p.score) for p in found]

    def search_lexical(self, query: Sparse, where: c.Condition | None, limit: int) -> list[tuple[dict, float]]:
        if not query.indices:
            return []
        sparse = SparseVector(indices=list(query.indices), values=list(query.values))
        request = QueryRequest(limit=limit, query=Query.Nearest(sparse, using=SPARSE), filter=to_filter(where),
                               with_payload=True)
        with self._lock.read():
            found = self._shard.query(request)
        return [(p.payload, p.score) for p in found]

    def get(self, point_ids: list[str]) -> dict[str, dict]:
        if not point_ids:
            return {}
        with self._lock.read():
            records = self._shard.retrieve(point_ids, True, False)
        return {str(r.id): r.payload for r in records}

    def scroll(self, where: c.Condition | None, with_vectors: bool = False) -> Iterator[StoredPoint]:
        offset = None
        flt = to_filter(where)
        while True:
            with self._lock.read():
                records, offset = self._shard.scroll(
                    ScrollRequest(offset=offset, limit=256, filter=flt, with_payload=True, with_vector=with_vectors)
                )
            yield from map(StoredPoint.from_record, records)
            if offset is None:
                return

    def count(self, where: c.Condition | None = None) -> int:
        with self._lock.read():
            if where is None:
                return self._shard.info().points_count
            return self._shard.count(CountRequest(exact=True, filter=to_filter(where)))

    def exists(self, where: c.Condition) -> bool:
        request = ScrollRequest(limit=1, filter=to_filter(where), with_payload=False, with_vector=False)
        with self._lock.read():
            records, _ = self._shard.scroll(request)
        return bool(records)

    def oldest(self, where: c.Condition | None) -> float | None:
        request = ScrollRequest(limit=1, filter=to_filter(where), with_payload=True, with_vector=False,
                                order_by=OrderBy(TIME_FIELD, Direction.Asc))
        with self._lock.read():
            records, _ = self._shard.scroll(request)
        return float(records[0].payload[TIME_FIELD]) if records else None

    def disk_bytes(self) -> int:
        return sum(f.stat().st_blocks * 512 for f in self.path.rglob("*") if f.is_file())

    def close(self) -> None:
        with self._lock.write():
            self._shard.flush()
            self._shard.close()
