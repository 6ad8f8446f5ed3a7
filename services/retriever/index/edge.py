"""Qdrant Edge, in-process: one shard per (embedding model, dimension).

Edge runs no background optimizer, and `EdgeShard.optimize()` holds the
GIL for as long as it runs, which would freeze every gRPC call while it
builds HNSW. So this process never builds HNSW (indexing_threshold 0), and
`maintain()` only vacuums deleted points, which takes under a second at
20,000. The HNSW graph is built in another process, on a copy of the shard,
and swapped in when no write came in meanwhile (`rebuild_graph`, run by
services/retriever/index/graph.py; ADR 0020, 0035). Until then, and for points
written since, searches are exact over the points the payload indexes select.

EdgeShard is safe to call from several threads; a ReadWriteLock still makes
a (document, strategy) replacement appear all at once to queries.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
import time
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
    HnswIndexConfig,
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
    SearchParams,
    SparseVector,
    UpdateOperation,
)

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

log = logging.getLogger("chunklab.retriever.edge")

BATCH = 512
_REPO = Path(__file__).resolve().parents[3]  # where `python -m services.retriever.index.graph` runs
# Written into a shard by the process that built its HNSW graph (when, over how many points,
# and that it covers every point); the first write after marks it no longer current.
GRAPH_MARKER = "chunklab-graph.json"
# Vacuum when this share of the points are deleted ones (Qdrant's default).
VACUUM_SHARE = 0.2
VACUUM_MIN = 1000


def shard_config(dimension: int, build_graph: bool = False, store_idf: bool = False) -> EdgeConfig:
    """The shard's configuration. This process opens shards with HNSW
    building off; the graph builder's process opens its copy with it on
    (every segment indexed, in one thread, Qdrant's default graph). The
    sparse vectors get no IDF from the shard (term_stats.py); `store_idf`
    opens a shard written before that (`_drop_store_idf`)."""
    return EdgeConfig(
        vectors={DENSE: EdgeVectorParams(size=dimension, distance=Distance.Dot)},
        sparse_vectors={
            SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf) if store_idf else EdgeSparseVectorParams()
        },
        optimizers=EdgeOptimizersConfig(indexing_threshold=1 if build_graph else 0),
        hnsw_config=HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000, max_indexing_threads=1)
        if build_graph
        else None,
        payload_memory=Memory.Cached,
    )


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
        _recover_swap(path)
        marker = _read_marker(path)
        # The generation the HNSW graph covers (None: points were written since it was built, or never built).
        self.graph_generation: int | None = 0 if marker.get("current") else None
        if (path / "edge_config.json").exists():
            if _holds_store_idf(path):
                _drop_store_idf(path, dimension)
                self.graph_generation = None
            self._shard = EdgeShard.load(str(path), shard_config(dimension))
        else:
            self._shard = _create(path, dimension)

    # -- writes -----------------------------------------------------------

    def _upsert(self, points: list[IndexPoint]) -> None:
        for start in range(0, len(points), BATCH):
            self._shard.update(UpdateOperation.upsert_points([_point(p) for p in points[start : start + BATCH]]))

    def replace(self, document_id: str, strategy: str, config_id: str, points: list[IndexPoint], activate: bool) -> int:
        old = to_filter(set_condition(document_id, strategy, config_id))
        with self._lock.write():
            replaced = self._shard.count(CountRequest(exact=True, filter=old))
            if replaced:
                self._shard.update(UpdateOperation.delete_points_by_filter(old))
            if activate:
                self._deactivate(document_id, strategy, config_id)
            self._upsert(points)
            self._shard.flush()
            self._deleted_since_vacuum += replaced
            self._written()
        return replaced

    def _deactivate(self, document_id: str, strategy: str, config_id: str) -> None:
        others = to_filter(other_sets(document_id, strategy, config_id))
        self._shard.update(UpdateOperation.set_payload_by_filter(others, {SET_STATE_FIELD: INACTIVE}))

    def activate(self, document_id: str, strategy: str, config_id: str) -> None:
        with self._lock.write():
            self._deactivate(document_id, strategy, config_id)
            self._shard.update(
                UpdateOperation.set_payload_by_filter(
                    to_filter(set_condition(document_id, strategy, config_id)), {SET_STATE_FIELD: ACTIVE}
                )
            )
            self._shard.flush()
            self._written()

    def delete_set(self, document_id: str, strategy: str, config_id: str) -> int:
        return self._delete(set_condition(document_id, strategy, config_id))

    def upsert(self, points: list[IndexPoint]) -> None:
        with self._lock.write():
            self._upsert(points)
            self._shard.flush()
            self._written()

    def delete_document(self, document_id: str) -> int:
        return self._delete(c.match("document_id", document_id))

    def _delete(self, condition: c.Condition) -> int:
        flt = to_filter(condition)
        with self._lock.write():
            deleted = self._shard.count(CountRequest(exact=True, filter=flt))
            if deleted:
                self._shard.update(UpdateOperation.delete_points_by_filter(flt))
                self._shard.flush()
                self._deleted_since_vacuum += deleted
                self._written()
        return deleted

    def maintain(self) -> None:
        with self._lock.write():
            points = self._shard.info().points_count
            if self._deleted_since_vacuum >= max(VACUUM_MIN, VACUUM_SHARE * points):
                self._shard.optimize()
                self._deleted_since_vacuum = 0

    def rebuild_graph(self, stop: threading.Event | None = None, timeout_s: float = 3600.0) -> bool:
        """Builds the HNSW graph over every point in another process and swaps
        the result in; searches go on meanwhile. Returns False, keeping the
        shard as it is, when a write came in during the build (call again
        later) or `stop` was set (the build is killed); raises
        GraphBuildFailed when the build process fails.

        The copy is taken under the read lock (no write can change the files
        it reads); the swap happens under the write lock, so a query sees
        the shard before or after, never between."""
        building, previous = _siblings(self.path)
        shutil.rmtree(building, ignore_errors=True)
        try:
            with self._lock.read():
                generation = self.generation
                self._shard.flush()
                shutil.copytree(self.path, building)
            try:
                if not _run_build(graph_command(building, self.dimension), stop, timeout_s):
                    return False
            except GraphBuildFailed as exc:
                raise GraphBuildFailed(f"building the HNSW graph of {self.path.name} failed: {exc}") from None
            with self._lock.write():
                if self.generation != generation:
                    return False
                self._swap_in(building, previous)
                self.graph_generation = generation
        finally:
            shutil.rmtree(building, ignore_errors=True)  # gone already once swapped in
        shutil.rmtree(previous, ignore_errors=True)
        return True

    def _swap_in(self, building: Path, previous: Path) -> None:
        """Replaces the open shard by the one at `building` (under the write lock);
        on a failure to open it, puts the old one back and raises."""
        self._shard.close()
        self.path.rename(previous)
        building.rename(self.path)
        try:
            self._shard = EdgeShard.load(str(self.path), shard_config(self.dimension))
        except Exception:
            self.path.rename(building)
            previous.rename(self.path)
            self._shard = EdgeShard.load(str(self.path), shard_config(self.dimension))
            raise

    @property
    def graph_current(self) -> bool:
        """Whether the HNSW graph covers every point written so far."""
        return self.graph_generation == self.generation

    def graph_built_at(self) -> float | None:
        """When the graph in use was built (seconds since the epoch), None if never."""
        built_at = _read_marker(self.path).get("built_at")
        return float(built_at) if built_at is not None else None

    def _written(self) -> None:
        """Bookkeeping after a write (under the write lock): the graph no longer covers every point."""
        self.generation += 1
        if self.graph_generation is not None:
            self.graph_generation = None
            write_marker(self.path, current=False)

    # -- reads ------------------------------------------------------------

    def search(
        self, vector: list[float], where: c.Condition | None, limit: int, exact: bool = False
    ) -> list[tuple[dict, float]]:
        request = QueryRequest(
            limit=limit,
            query=Query.Nearest(vector, using=DENSE),
            filter=to_filter(where),
            with_payload=True,
            params=SearchParams(exact=True) if exact else None,
        )
        with self._lock.read():
            found = self._shard.query(request)
        return [(p.payload, p.score) for p in found]

    def search_lexical(self, query: Sparse, where: c.Condition | None, limit: int) -> list[tuple[dict, float]]:
        if not query.indices:
            return []
        sparse = SparseVector(indices=list(query.indices), values=list(query.values))
        request = QueryRequest(
            limit=limit, query=Query.Nearest(sparse, using=SPARSE), filter=to_filter(where), with_payload=True
        )
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
        request = ScrollRequest(
            limit=1,
            filter=to_filter(where),
            with_payload=True,
            with_vector=False,
            order_by=OrderBy(TIME_FIELD, Direction.Asc),
        )
        with self._lock.read():
            records, _ = self._shard.scroll(request)
        return float(records[0].payload[TIME_FIELD]) if records else None

    def disk_bytes(self) -> int:
        with self._lock.read():  # not while a graph build swaps the folder
            return sum(f.stat().st_blocks * 512 for f in self.path.rglob("*") if f.is_file())

    def close(self) -> None:
        with self._lock.write():
            self._shard.flush()
            self._shard.close()


def _create(path: Path, dimension: int) -> EdgeShard:
    path.mkdir(parents=True, exist_ok=True)
    shard = EdgeShard.create(str(path), shard_config(dimension))
    for name in KEYWORD_FIELDS:
        shard.update(UpdateOperation.create_field_index(name, PayloadSchemaType.Keyword))
    for name in INTEGER_FIELDS:
        shard.update(UpdateOperation.create_field_index(name, PayloadSchemaType.Integer))
    shard.update(UpdateOperation.create_field_index(TIME_FIELD, PayloadSchemaType.Float))
    shard.flush()
    return shard


def _holds_store_idf(path: Path) -> bool:
    """Whether the shard was written when the store applied IDF itself."""
    try:
        config = json.loads((path / "edge_config.json").read_text())
    except (OSError, ValueError):
        return False
    return (config.get("sparse_vectors", {}).get(SPARSE) or {}).get("modifier") == "idf"


def _drop_store_idf(path: Path, dimension: int) -> None:
    """Copies a shard whose store applied IDF over every point it held into
    one that applies none (same points, vectors and payloads), and swaps it
    in: a shard's config cannot change in place. Once, when it is opened;
    a crash midway leaves the old shard (`_recover_swap`)."""
    building, previous = _siblings(path)
    shutil.rmtree(building, ignore_errors=True)
    old = EdgeShard.load(str(path), shard_config(dimension, store_idf=True))
    new = _create(building, dimension)
    offset, copied = None, 0
    while True:
        records, offset = old.scroll(ScrollRequest(offset=offset, limit=BATCH, with_payload=True, with_vector=True))
        if records:
            new.update(UpdateOperation.upsert_points([Point(r.id, r.vector, r.payload) for r in records]))
            copied += len(records)
        if offset is None:
            break
    new.flush()
    new.close()
    old.close()
    path.rename(previous)
    building.rename(path)
    shutil.rmtree(previous)
    log.info(
        "rewrote %s without the store's IDF (%d points): BM25 statistics now come from each index set",
        path.name,
        copied,
    )


class GraphBuildFailed(RuntimeError):
    """The process that builds a shard's HNSW graph did not finish."""


def graph_command(folder: Path, dimension: int) -> list[str]:
    return [sys.executable, "-m", "services.retriever.index.graph", str(folder), str(dimension)]


def _run_build(command: list[str], stop: threading.Event | None, timeout_s: float) -> bool:
    """Runs the build process to its end (True), or kills it when stop is set (False)."""
    try:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=_REPO)
    except OSError as exc:
        raise GraphBuildFailed(f"the build process could not start ({exc.strerror})") from None
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _, errors = process.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
                process.kill()
                process.communicate()
                if stop is not None and stop.is_set():
                    return False
                raise GraphBuildFailed(f"still running after {timeout_s:.0f}s") from None
    if process.returncode:
        lines = (errors or "").strip().splitlines()
        raise GraphBuildFailed(lines[-1] if lines else f"exit status {process.returncode}")
    return True


def _read_marker(path: Path) -> dict:
    try:
        marker = json.loads((path / GRAPH_MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def write_marker(path: Path, **fields) -> None:
    """Updates the graph marker of the shard at path (written whole, then renamed into place)."""
    marker = {**_read_marker(path), **fields}
    tmp = path / (GRAPH_MARKER + ".tmp")
    tmp.write_text(json.dumps(marker))
    tmp.replace(path / GRAPH_MARKER)


def _siblings(path: Path) -> tuple[Path, Path]:
    """Where a shard's graph is built, and where the shard it replaces waits to be removed."""
    return path.with_name(path.name + ".building"), path.with_name(path.name + ".previous")


def _recover_swap(path: Path) -> None:
    """Finishes or undoes a swap a crash interrupted: the shard folder is
    always either the old shard or the new one, whole."""
    building, previous = _siblings(path)
    if previous.exists():
        if path.exists():
            shutil.rmtree(previous)  # the new shard is in place
        else:
            previous.rename(path)  # crashed between the two renames: the old shard stays
    shutil.rmtree(building, ignore_errors=True)
