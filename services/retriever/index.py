"""The vector index behind one small interface.

`EdgeIndex` is Qdrant Edge, Qdrant's in-process engine, one shard per
embedding model in a folder under the data folder. Only the retriever
process opens it. All operations on one shard hold one lock, so a query
never sees half of a replacement.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qdrant_edge import (
    CountRequest,
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    MatchAny,
    MatchValue,
    PayloadSchemaType,
    Point,
    Query,
    QueryRequest,
    UpdateOperation,
)

KEYWORD_FIELDS = ("document_id", "strategy", "config_id", "collection", "language")


@dataclass(frozen=True)
class SearchFilter:
    strategy: str
    document_ids: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexPoint:
    point_id: str
    vector: list[float]
    payload: dict[str, Any]


class VectorIndex(ABC):
    """What the retriever needs of a vector store, whichever it is."""

    dimension: int

    @abstractmethod
    def replace(self, document_id: str, strategy: str, points: list[IndexPoint]) -> int:
        """Atomically swaps a (document, strategy)'s points; returns how many went."""

    @abstractmethod
    def delete_document(self, document_id: str) -> int: ...

    @abstractmethod
    def search(self, vector: list[float], where: SearchFilter, limit: int) -> list[tuple[dict, float]]: ...

    @abstractmethod
    def get(self, point_ids: list[str]) -> dict[str, dict]: ...

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def close(self) -> None: ...


def _match(key: str, values: tuple[str, ...] | list[str]) -> FieldCondition:
    if len(values) == 1:
        return FieldCondition(key=key, match=MatchValue(values[0]))
    return FieldCondition(key=key, match=MatchAny(any=list(values)))


def _to_filter(where: SearchFilter) -> Filter:
    conditions = [_match("strategy", [where.strategy])]
    for key, values in (
        ("document_id", where.document_ids),
        ("collection", where.collections),
        ("language", where.languages),
    ):
        if values:
            conditions.append(_match(key, values))
    return Filter(must=conditions)


class EdgeIndex(VectorIndex):
    def __init__(self, path: Path, dimension: int) -> None:
        self.path = path
        self.dimension = dimension
        self._lock = threading.Lock()
        if (path / "edge_config.json").exists():
            self._shard = EdgeShard.load(str(path))
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._shard = EdgeShard.create(
                str(path), EdgeConfig(vectors=EdgeVectorParams(size=dimension, distance=Distance.Cosine))
            )
            for field in KEYWORD_FIELDS:
                self._shard.update(UpdateOperation.create_field_index(field, PayloadSchemaType.Keyword))
            self._shard.update(UpdateOperation.create_field_index("chunk_index", PayloadSchemaType.Integer))
            self._shard.flush()

    def _count(self, flt: Filter) -> int:
        return self._shard.count(CountRequest(exact=True, filter=flt))

    def replace(self, document_id: str, strategy: str, points: list[IndexPoint]) -> int:
        old = Filter(must=[_match("document_id", [document_id]), _match("strategy", [strategy])])
        new_points = [Point(p.point_id, p.vector, p.payload) for p in points]
        with self._lock:
            replaced = self._count(old)
            if replaced:
                self._shard.update(UpdateOperation.delete_points_by_filter(old))
            for start in range(0, len(new_points), 512):
                self._shard.update(UpdateOperation.upsert_points(new_points[start : start + 512]))
            self._shard.flush()
        return replaced

    def delete_document(self, document_id: str) -> int:
        flt = Filter(must=[_match("document_id", [document_id])])
        with self._lock:
            deleted = self._count(flt)
            if deleted:
                self._shard.update(UpdateOperation.delete_points_by_filter(flt))
                self._shard.flush()
        return deleted

    def search(self, vector: list[float], where: SearchFilter, limit: int) -> list[tuple[dict, float]]:
        request = QueryRequest(limit=limit, query=Query.Nearest(vector), filter=_to_filter(where), with_payload=True)
        with self._lock:
            found = self._shard.query(request)
        return [(p.payload, p.score) for p in found]

    def get(self, point_ids: list[str]) -> dict[str, dict]:
        if not point_ids:
            return {}
        with self._lock:
            records = self._shard.retrieve(point_ids, True, False)
        return {str(r.id): r.payload for r in records}

    def count(self) -> int:
        with self._lock:
            return self._shard.info().points_count

    def close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


def model_folder(root: Path, model: str) -> Path:
    """One folder per embedding model, named so that any model name is safe."""
    return root / re.sub(r"[^A-Za-z0-9._-]+", "_", model)
