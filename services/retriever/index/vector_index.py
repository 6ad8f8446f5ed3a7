"""The vector index behind one small interface, whichever store holds it.

Two implementations with the same semantics (the congruence tests run the
same operations through both):

- `EdgeIndex` (services/retriever/index/edge.py): Qdrant Edge, in-process,
  one shard per (embedding model, dimension) in a folder under the data
  folder. The default: nothing to run beside the retriever.
- `QdrantServerIndex` (services/retriever/index/qdrant_server.py): a Qdrant server
  or cluster through qdrant-client, one collection per (embedding model,
  dimension); tests use qdrant-client's local mode, which speaks the same API.

A point has an optional dense vector "dense" (lookup-only chunks such as
parents have none, so no search can return them) and a sparse BM25 vector
"bm25" for hybrid retrieval. Points are fetched by id for expansion, never
by scanning a filter.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

from services.retriever.index import conditions as c
from services.retriever.index.conditions import Condition
from services.retriever.index.payloads import ACTIVE, SET_STATE_FIELD, IndexPoint, Sparse

DENSE = "dense"
SPARSE = "bm25"


@dataclass(frozen=True)
class StoredPoint:
    """A point as read back with its vectors (for the archive)."""

    point_id: str
    payload: dict
    dense: list[float] | None
    sparse: Sparse | None

    @classmethod
    def from_record(cls, record) -> StoredPoint:
        """From a record either store returns (id, payload, named vectors)."""
        vectors = record.vector if isinstance(record.vector, dict) else {}
        sparse = vectors.get(SPARSE)
        return cls(
            str(record.id),
            record.payload,
            vectors.get(DENSE),
            Sparse(tuple(sparse.indices), tuple(sparse.values)) if sparse is not None else None,
        )


class VectorIndex(ABC):
    """What the retriever needs of a vector store."""

    dimension: int
    # Whether this process is the index's only writer (the embedded store is
    # opened by one process): then what a query learns about the index holds
    # until `generation` changes, which every write bumps once it is applied.
    sole_writer: bool = False
    generation: int = 0
    # Whether an HNSW graph this process built covers every point (EdgeIndex, ADR 0035);
    # a Qdrant server builds and reports its own graphs.
    graph_current: bool = False

    def graph_built_at(self) -> float | None:
        """When the graph in use was built (seconds since the epoch), None if never."""
        return None

    @abstractmethod
    def replace(self, document_id: str, strategy: str, config_id: str, points: list[IndexPoint], activate: bool) -> int:
        """Swaps one index set's points for these, so that a query sees the old
        set or the new one; with `activate`, the document's other sets of the
        strategy stop being active in the same step. Returns how many old
        points of the set went."""

    @abstractmethod
    def activate(self, document_id: str, strategy: str, config_id: str) -> None:
        """Makes one set the active one of its (document, strategy): its points'
        SET_STATE_FIELD "active", the other sets' "inactive", seen by queries at once."""

    @abstractmethod
    def delete_set(self, document_id: str, strategy: str, config_id: str) -> int:
        """Removes one set's points; returns how many went."""

    @abstractmethod
    def upsert(self, points: list[IndexPoint]) -> None:
        """Writes points as they are (restoring an archive)."""

    @abstractmethod
    def delete_document(self, document_id: str) -> int:
        """Removes every point of a document; returns how many went."""

    @abstractmethod
    def search(
        self, vector: list[float], where: Condition | None, limit: int, exact: bool = False
    ) -> list[tuple[dict, float]]:
        """Dense nearest neighbours by dot product (vectors are unit length);
        `exact` scores every candidate rather than walking an HNSW graph."""

    @abstractmethod
    def search_lexical(self, query: Sparse, where: Condition | None, limit: int) -> list[tuple[dict, float]]:
        """BM25: the query's terms against each point's sparse vector, weighted by IDF."""

    @abstractmethod
    def get(self, point_ids: list[str]) -> dict[str, dict]:
        """Payloads by id; ids that do not exist are simply absent."""

    @abstractmethod
    def scroll(self, where: Condition | None, with_vectors: bool = False) -> Iterator[StoredPoint]:
        """Every point matching the filter (sweeper, archive, tests)."""

    @abstractmethod
    def count(self, where: Condition | None = None) -> int: ...

    @abstractmethod
    def exists(self, where: Condition) -> bool:
        """Whether any point matches: a cheap probe (one point, no payload)."""

    @abstractmethod
    def oldest(self, where: Condition | None) -> float | None:
        """The earliest publication time (payload TIME_FIELD) among the points
        that match, None when none do: one point read in time order."""

    def maintain(self) -> None:  # noqa: B027 - optional: a store with nothing to tidy keeps this
        """Housekeeping off the request path (vacuuming deleted points)."""

    @abstractmethod
    def disk_bytes(self) -> int:
        """Bytes on disk; 0 where the store is elsewhere (a server)."""

    @abstractmethod
    def close(self) -> None: ...


class ReadWriteLock:
    """Many readers or one writer: searches run side by side, a replacement
    of a document's points is seen whole or not at all."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False

    def read(self) -> _Guard:
        return _Guard(self._acquire_read, self._release_read)

    def write(self) -> _Guard:
        return _Guard(self._acquire_write, self._release_write)

    def _acquire_read(self) -> None:
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._readers += 1

    def _release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    def _acquire_write(self) -> None:
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._writer = True  # new readers wait from here on
            while self._readers:
                self._cond.wait()

    def _release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()


class _Guard:
    __slots__ = ("_enter", "_exit")

    def __init__(self, enter, exit_) -> None:
        self._enter, self._exit = enter, exit_

    def __enter__(self) -> None:
        self._enter()

    def __exit__(self, *exc) -> None:
        self._exit()


def index_name(model: str, dimension: int) -> str:
    """One index per (embedding model, dimension), named so that any model name is safe."""
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}__{dimension}"


def set_condition(document_id: str, strategy: str, config_id: str) -> Condition:
    """The points of one index set."""
    return c.All(
        must=(c.match("document_id", document_id), c.match("strategy", strategy), c.match("config_id", config_id))
    )


def other_sets(document_id: str, strategy: str, config_id: str) -> Condition:
    """The document's other sets of the strategy that are active now."""
    return c.All(
        must=(c.match("document_id", document_id), c.match("strategy", strategy), c.match(SET_STATE_FIELD, ACTIVE)),
        must_not=(c.match("config_id", config_id),),
    )
