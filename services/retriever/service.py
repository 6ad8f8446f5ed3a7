"""Retriever logic: indexing, search and expansion. Knows nothing of gRPC."""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path

from google.protobuf import json_format

from chunklab.embeddings import EmbeddingProvider
from chunklab.errors import FailedPrecondition, InvalidArgument
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever import expansion
from services.retriever.index import EdgeIndex, IndexPoint, SearchFilter, VectorIndex, model_folder

MAX_TOP_K = 100
MAX_NEIGHBORS = 10
QUERY_CACHE_SIZE = 4096
# The embedding model a shard folder holds vectors of.
MODEL_FILE = "embedding_model.txt"


def chunk_to_payload(chunk: common_pb2.Chunk) -> dict:
    payload = json_format.MessageToDict(
        chunk, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    if chunk.HasField("published_at"):
        payload["published_ts"] = chunk.published_at.seconds
    return payload


def payload_to_chunk(payload: dict) -> common_pb2.Chunk:
    return json_format.ParseDict(payload, common_pb2.Chunk(), ignore_unknown_fields=True)


class QueryCache:
    """Query embeddings by (model, text): a question asked again is not embedded again."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> list[float] | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple[str, str], value: list[float]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class RetrieverService:
    def __init__(self, index_root: Path, default_model: str, provider_for) -> None:
        self._root = index_root
        self._default_model = default_model
        self._provider_for = provider_for  # (model name) -> EmbeddingProvider
        self._indexes: dict[str, VectorIndex] = {}
        self._lock = threading.Lock()
        self._query_cache = QueryCache()
        self._root.mkdir(parents=True, exist_ok=True)

    # -- indexes ---------------------------------------------------------

    def _index(self, model: str, dimension: int | None = None) -> VectorIndex | None:
        with self._lock:
            index = self._indexes.get(model)
            if index is None:
                folder = model_folder(self._root, model)
                if dimension is None and not (folder / "edge_config.json").exists():
                    return None
                index = EdgeIndex(folder, dimension or self._provider_for(model).dimension)
                (folder / MODEL_FILE).write_text(model)
                self._indexes[model] = index
            if dimension is not None and index.dimension != dimension:
                raise InvalidArgument(
                    f"vectors of model {model!r} have {index.dimension} dimensions in the index, "
                    f"not {dimension}; re-index with the same model"
                )
            return index

    def _all_indexes(self) -> list[VectorIndex]:
        for folder in sorted(self._root.iterdir()):
            if (folder / MODEL_FILE).exists():
                self._index((folder / MODEL_FILE).read_text())
        with self._lock:
            return list(self._indexes.values())

    def close(self) -> None:
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()

    # -- writes ----------------------------------------------------------

    def index_chunks(
        self, header: retriever_pb2.IndexHeader, chunks: list[retriever_pb2.IndexedChunk]
    ) -> tuple[int, int]:
        for field in ("document_id", "strategy", "config_id", "embedding_model"):
            if not getattr(header, field):
                raise InvalidArgument(f"the index header needs {field}")
        if header.dimension <= 0:
            raise InvalidArgument("the index header needs the vectors' dimension")
        seen: set[int] = set()
        points = []
        indexed_at = to_proto(utcnow())
        for item in chunks:
            chunk = item.chunk
            if chunk.document_id != header.document_id or chunk.strategy != header.strategy:
                raise InvalidArgument(
                    f"chunk {chunk.chunk_index} belongs to ({chunk.document_id}, {chunk.strategy}), "
                    f"not to the header's ({header.document_id}, {header.strategy})"
                )
            key = (chunk.role, chunk.chunk_index)
            if key in seen:
                raise InvalidArgument(f"chunk_index {chunk.chunk_index} ({chunk.role}) is sent twice")
            seen.add(key)
            if len(item.vector) != header.dimension:
                raise InvalidArgument(
                    f"chunk {chunk.chunk_index} has a vector of {len(item.vector)} dimensions, "
                    f"the header says {header.dimension}"
                )
            try:
                uuid.UUID(chunk.chunk_id)
            except ValueError:
                raise InvalidArgument(f"chunk_id {chunk.chunk_id!r} is not a UUID (use chunklab.ids.chunk_id)") from None
            chunk.config_id = header.config_id
            chunk.embedding_model = header.embedding_model
            chunk.indexed_at.CopyFrom(indexed_at)
            points.append(IndexPoint(chunk.chunk_id, list(item.vector), chunk_to_payload(chunk)))
        index = self._index(header.embedding_model, header.dimension)
        replaced = index.replace(header.document_id, header.strategy, points)
        return len(points), replaced

    def delete_document(self, document_id: str) -> int:
        if not document_id:
            raise InvalidArgument("document_id is empty")
        return sum(index.delete_document(document_id) for index in self._all_indexes())

    # -- reads -----------------------------------------------------------

    def _embed_query(self, model: str, query: str) -> tuple[list[float], bool]:
        key = (model, query)
        cached = self._query_cache.get(key)
        if cached is not None:
            return cached, True
        provider: EmbeddingProvider = self._provider_for(model)
        vector = provider.embed_query(query).tolist()
        self._query_cache.put(key, vector)
        return vector, False

    def retrieve(self, request: retriever_pb2.RetrieveRequest) -> retriever_pb2.RetrieveResponse:
        started = time.perf_counter()
        query = request.query.strip()
        if not query:
            raise InvalidArgument("the query is empty: ask a question")
        if not request.strategy:
            raise InvalidArgument("name a strategy to search, e.g. fixed_size")
        if not 1 <= request.top_k <= MAX_TOP_K:
            raise InvalidArgument(f"top_k must be between 1 and {MAX_TOP_K}, got {request.top_k}")
        for name in ("neighbor_prev", "neighbor_next"):
            value = getattr(request, name)
            if not 0 <= value <= MAX_NEIGHBORS:
                raise InvalidArgument(f"{name} must be between 0 and {MAX_NEIGHBORS}, got {value}")
        model = request.embedding_model or self._default_model
        self._provider_for(model)  # an unknown model is INVALID_ARGUMENT, whatever is indexed
        index = self._index(model)
        if index is None:
            raise FailedPrecondition(
                f"nothing is indexed with the embedding model {model!r} yet; process a document first"
            )

        vector, cached = self._embed_query(model, query)
        embedded = time.perf_counter()
        where = SearchFilter(
            strategy=request.strategy,
            document_ids=tuple(request.filter.document_ids),
            collections=tuple(request.filter.collections),
            languages=tuple(request.filter.languages),
        )
        hits = [(payload_to_chunk(p), s) for p, s in index.search(vector, where, request.top_k)]
        searched = time.perf_counter()

        def lookup(point_ids: list[str]) -> dict[str, common_pb2.Chunk]:
            return {pid: payload_to_chunk(p) for pid, p in index.get(point_ids).items()}

        flat, tree = expansion.expand(hits, request.neighbor_prev, request.neighbor_next, lookup)
        done = time.perf_counter()
        return retriever_pb2.RetrieveResponse(
            retrieved_chunks=flat,
            expansion_tree=tree,
            embedding_model=model,
            timings=retriever_pb2.RetrieveTimings(
                embed_ms=(embedded - started) * 1e3,
                search_ms=(searched - embedded) * 1e3,
                expand_ms=(done - searched) * 1e3,
                total_ms=(done - started) * 1e3,
                query_embedding_cached=cached,
            ),
        )

    def stats(self) -> retriever_pb2.GetIndexStatsResponse:
        indexes = self._all_indexes()
        disk = sum(f.stat().st_size for f in self._root.rglob("*") if f.is_file())
        return retriever_pb2.GetIndexStatsResponse(
            total_points=sum(index.count() for index in indexes), disk_bytes=disk
        )
