import datetime

from chunklab.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CoverageGap(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COVERAGE_GAP_UNSPECIFIED: _ClassVar[CoverageGap]
    COVERAGE_GAP_NOT_PROCESSED: _ClassVar[CoverageGap]
    COVERAGE_GAP_NO_ACTIVE_SET: _ClassVar[CoverageGap]
    COVERAGE_GAP_OTHER_CONFIGURATION: _ClassVar[CoverageGap]
    COVERAGE_GAP_ARCHIVED: _ClassVar[CoverageGap]
COVERAGE_GAP_UNSPECIFIED: CoverageGap
COVERAGE_GAP_NOT_PROCESSED: CoverageGap
COVERAGE_GAP_NO_ACTIVE_SET: CoverageGap
COVERAGE_GAP_OTHER_CONFIGURATION: CoverageGap
COVERAGE_GAP_ARCHIVED: CoverageGap

class IndexHeader(_message.Message):
    __slots__ = ("document_id", "strategy", "config_id", "embedding_model", "dimension", "spec", "expansion", "activation", "chunk_count")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_FIELD_NUMBER: _ClassVar[int]
    ACTIVATION_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    strategy: str
    config_id: str
    embedding_model: str
    dimension: int
    spec: _common_pb2.StrategySpec
    expansion: _common_pb2.ExpansionKind
    activation: _common_pb2.Activation
    chunk_count: int
    def __init__(self, document_id: _Optional[str] = ..., strategy: _Optional[str] = ..., config_id: _Optional[str] = ..., embedding_model: _Optional[str] = ..., dimension: _Optional[int] = ..., spec: _Optional[_Union[_common_pb2.StrategySpec, _Mapping]] = ..., expansion: _Optional[_Union[_common_pb2.ExpansionKind, str]] = ..., activation: _Optional[_Union[_common_pb2.Activation, str]] = ..., chunk_count: _Optional[int] = ...) -> None: ...

class IndexedChunk(_message.Message):
    __slots__ = ("chunk", "vector")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    chunk: _common_pb2.Chunk
    vector: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, chunk: _Optional[_Union[_common_pb2.Chunk, _Mapping]] = ..., vector: _Optional[_Iterable[float]] = ...) -> None: ...

class IndexChunkBatch(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[IndexedChunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[IndexedChunk, _Mapping]]] = ...) -> None: ...

class IndexChunksRequest(_message.Message):
    __slots__ = ("header", "batch")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    header: IndexHeader
    batch: IndexChunkBatch
    def __init__(self, header: _Optional[_Union[IndexHeader, _Mapping]] = ..., batch: _Optional[_Union[IndexChunkBatch, _Mapping]] = ...) -> None: ...

class IndexChunksResponse(_message.Message):
    __slots__ = ("chunks_indexed", "chunks_replaced", "active")
    CHUNKS_INDEXED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_REPLACED_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    chunks_indexed: int
    chunks_replaced: int
    active: bool
    def __init__(self, chunks_indexed: _Optional[int] = ..., chunks_replaced: _Optional[int] = ..., active: _Optional[bool] = ...) -> None: ...

class DeleteDocumentChunksRequest(_message.Message):
    __slots__ = ("document_id",)
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    def __init__(self, document_id: _Optional[str] = ...) -> None: ...

class DeleteDocumentChunksResponse(_message.Message):
    __slots__ = ("chunks_deleted",)
    CHUNKS_DELETED_FIELD_NUMBER: _ClassVar[int]
    chunks_deleted: int
    def __init__(self, chunks_deleted: _Optional[int] = ...) -> None: ...

class RetrieveRequest(_message.Message):
    __slots__ = ("query", "options", "as_of", "exact")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    query: str
    options: _common_pb2.RetrievalOptions
    as_of: _timestamp_pb2.Timestamp
    exact: bool
    def __init__(self, query: _Optional[str] = ..., options: _Optional[_Union[_common_pb2.RetrievalOptions, _Mapping]] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., exact: _Optional[bool] = ...) -> None: ...

class GetRetrievalLimitsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RetrieveTimings(_message.Message):
    __slots__ = ("embed_ms", "search_ms", "expand_ms", "total_ms", "query_embedding_cached", "rerank_ms")
    EMBED_MS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_MS_FIELD_NUMBER: _ClassVar[int]
    EXPAND_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_CACHED_FIELD_NUMBER: _ClassVar[int]
    RERANK_MS_FIELD_NUMBER: _ClassVar[int]
    embed_ms: float
    search_ms: float
    expand_ms: float
    total_ms: float
    query_embedding_cached: bool
    rerank_ms: float
    def __init__(self, embed_ms: _Optional[float] = ..., search_ms: _Optional[float] = ..., expand_ms: _Optional[float] = ..., total_ms: _Optional[float] = ..., query_embedding_cached: _Optional[bool] = ..., rerank_ms: _Optional[float] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("retrieved_chunks", "expansion_tree", "embedding_model", "timings", "reranker", "uncovered_documents")
    RETRIEVED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_TREE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    RERANKER_FIELD_NUMBER: _ClassVar[int]
    UNCOVERED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    retrieved_chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.RetrievedChunk]
    expansion_tree: _common_pb2.ExpansionTree
    embedding_model: str
    timings: RetrieveTimings
    reranker: str
    uncovered_documents: _containers.RepeatedCompositeFieldContainer[UncoveredDocument]
    def __init__(self, retrieved_chunks: _Optional[_Iterable[_Union[_common_pb2.RetrievedChunk, _Mapping]]] = ..., expansion_tree: _Optional[_Union[_common_pb2.ExpansionTree, _Mapping]] = ..., embedding_model: _Optional[str] = ..., timings: _Optional[_Union[RetrieveTimings, _Mapping]] = ..., reranker: _Optional[str] = ..., uncovered_documents: _Optional[_Iterable[_Union[UncoveredDocument, _Mapping]]] = ...) -> None: ...

class UncoveredDocument(_message.Message):
    __slots__ = ("document_id", "document_name", "gap")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    GAP_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    document_name: str
    gap: CoverageGap
    def __init__(self, document_id: _Optional[str] = ..., document_name: _Optional[str] = ..., gap: _Optional[_Union[CoverageGap, str]] = ...) -> None: ...

class GetIndexStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetIndexedSetRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: IndexedSetKey
    def __init__(self, key: _Optional[_Union[IndexedSetKey, _Mapping]] = ...) -> None: ...

class IndexedSetKey(_message.Message):
    __slots__ = ("embedding_model", "document_id", "strategy", "config_id")
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    embedding_model: str
    document_id: str
    strategy: str
    config_id: str
    def __init__(self, embedding_model: _Optional[str] = ..., document_id: _Optional[str] = ..., strategy: _Optional[str] = ..., config_id: _Optional[str] = ...) -> None: ...

class IndexedSet(_message.Message):
    __slots__ = ("embedding_model", "document_id", "strategy", "config_id", "spec", "points", "indexed_at", "active", "pinned", "bytes", "last_used_at", "expansion", "document_name", "collection")
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    embedding_model: str
    document_id: str
    strategy: str
    config_id: str
    spec: _common_pb2.StrategySpec
    points: int
    indexed_at: _timestamp_pb2.Timestamp
    active: bool
    pinned: bool
    bytes: int
    last_used_at: _timestamp_pb2.Timestamp
    expansion: _common_pb2.ExpansionKind
    document_name: str
    collection: str
    def __init__(self, embedding_model: _Optional[str] = ..., document_id: _Optional[str] = ..., strategy: _Optional[str] = ..., config_id: _Optional[str] = ..., spec: _Optional[_Union[_common_pb2.StrategySpec, _Mapping]] = ..., points: _Optional[int] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., active: _Optional[bool] = ..., pinned: _Optional[bool] = ..., bytes: _Optional[int] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expansion: _Optional[_Union[_common_pb2.ExpansionKind, str]] = ..., document_name: _Optional[str] = ..., collection: _Optional[str] = ...) -> None: ...

class ListIndexedSetsRequest(_message.Message):
    __slots__ = ("embedding_model", "document_id", "strategy", "page_size", "page_token")
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    embedding_model: str
    document_id: str
    strategy: str
    page_size: int
    page_token: str
    def __init__(self, embedding_model: _Optional[str] = ..., document_id: _Optional[str] = ..., strategy: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListIndexedSetsResponse(_message.Message):
    __slots__ = ("sets", "next_page_token")
    SETS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sets: _containers.RepeatedCompositeFieldContainer[IndexedSet]
    next_page_token: str
    def __init__(self, sets: _Optional[_Iterable[_Union[IndexedSet, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListIndexedChunksRequest(_message.Message):
    __slots__ = ("key", "page_size", "page_token")
    KEY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    key: IndexedSetKey
    page_size: int
    page_token: str
    def __init__(self, key: _Optional[_Union[IndexedSetKey, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListIndexedChunksResponse(_message.Message):
    __slots__ = ("chunks", "next_page_token")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.Chunk]
    next_page_token: str
    def __init__(self, chunks: _Optional[_Iterable[_Union[_common_pb2.Chunk, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ActivateIndexedSetRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: IndexedSetKey
    def __init__(self, key: _Optional[_Union[IndexedSetKey, _Mapping]] = ...) -> None: ...

class PinIndexedSetRequest(_message.Message):
    __slots__ = ("key", "pinned")
    KEY_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    key: IndexedSetKey
    pinned: bool
    def __init__(self, key: _Optional[_Union[IndexedSetKey, _Mapping]] = ..., pinned: _Optional[bool] = ...) -> None: ...

class DeleteIndexedSetRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: IndexedSetKey
    def __init__(self, key: _Optional[_Union[IndexedSetKey, _Mapping]] = ...) -> None: ...

class DeleteIndexedSetResponse(_message.Message):
    __slots__ = ("chunks_deleted",)
    CHUNKS_DELETED_FIELD_NUMBER: _ClassVar[int]
    chunks_deleted: int
    def __init__(self, chunks_deleted: _Optional[int] = ...) -> None: ...

class IndexStatsRow(_message.Message):
    __slots__ = ("embedding_model", "strategy", "collection", "points", "documents", "bytes")
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    embedding_model: str
    strategy: str
    collection: str
    points: int
    documents: int
    bytes: int
    def __init__(self, embedding_model: _Optional[str] = ..., strategy: _Optional[str] = ..., collection: _Optional[str] = ..., points: _Optional[int] = ..., documents: _Optional[int] = ..., bytes: _Optional[int] = ...) -> None: ...

class GetIndexStatsResponse(_message.Message):
    __slots__ = ("rows", "total_points", "disk_bytes", "archived_documents", "archive_bytes", "backend", "indexes")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_POINTS_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_BYTES_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    INDEXES_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[IndexStatsRow]
    total_points: int
    disk_bytes: int
    archived_documents: int
    archive_bytes: int
    backend: str
    indexes: _containers.RepeatedCompositeFieldContainer[VectorIndexInfo]
    def __init__(self, rows: _Optional[_Iterable[_Union[IndexStatsRow, _Mapping]]] = ..., total_points: _Optional[int] = ..., disk_bytes: _Optional[int] = ..., archived_documents: _Optional[int] = ..., archive_bytes: _Optional[int] = ..., backend: _Optional[str] = ..., indexes: _Optional[_Iterable[_Union[VectorIndexInfo, _Mapping]]] = ...) -> None: ...

class VectorIndexInfo(_message.Message):
    __slots__ = ("embedding_model", "dimension", "points", "graph_current", "graph_built_at")
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_CURRENT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_BUILT_AT_FIELD_NUMBER: _ClassVar[int]
    embedding_model: str
    dimension: int
    points: int
    graph_current: bool
    graph_built_at: _timestamp_pb2.Timestamp
    def __init__(self, embedding_model: _Optional[str] = ..., dimension: _Optional[int] = ..., points: _Optional[int] = ..., graph_current: _Optional[bool] = ..., graph_built_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class FreshnessWindow(_message.Message):
    __slots__ = ("collection", "max_age_days")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    MAX_AGE_DAYS_FIELD_NUMBER: _ClassVar[int]
    collection: str
    max_age_days: int
    def __init__(self, collection: _Optional[str] = ..., max_age_days: _Optional[int] = ...) -> None: ...

class ListFreshnessWindowsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListFreshnessWindowsResponse(_message.Message):
    __slots__ = ("windows",)
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    windows: _containers.RepeatedCompositeFieldContainer[FreshnessWindow]
    def __init__(self, windows: _Optional[_Iterable[_Union[FreshnessWindow, _Mapping]]] = ...) -> None: ...

class UpdateFreshnessWindowRequest(_message.Message):
    __slots__ = ("window",)
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    window: FreshnessWindow
    def __init__(self, window: _Optional[_Union[FreshnessWindow, _Mapping]] = ...) -> None: ...

class SweepRequest(_message.Message):
    __slots__ = ("dry_run", "as_of")
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, dry_run: _Optional[bool] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SweptDocument(_message.Message):
    __slots__ = ("document_id", "document_name", "collection", "published_at", "chunks")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    document_name: str
    collection: str
    published_at: _timestamp_pb2.Timestamp
    chunks: int
    def __init__(self, document_id: _Optional[str] = ..., document_name: _Optional[str] = ..., collection: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., chunks: _Optional[int] = ...) -> None: ...

class SweepResponse(_message.Message):
    __slots__ = ("documents", "chunks_archived", "dry_run")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[SweptDocument]
    chunks_archived: int
    dry_run: bool
    def __init__(self, documents: _Optional[_Iterable[_Union[SweptDocument, _Mapping]]] = ..., chunks_archived: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class ListArchivedDocumentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListArchivedDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[SweptDocument]
    next_page_token: str
    def __init__(self, documents: _Optional[_Iterable[_Union[SweptDocument, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RestoreDocumentRequest(_message.Message):
    __slots__ = ("document_id",)
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    def __init__(self, document_id: _Optional[str] = ...) -> None: ...

class RestoreDocumentResponse(_message.Message):
    __slots__ = ("chunks_restored", "outside_freshness_window")
    CHUNKS_RESTORED_FIELD_NUMBER: _ClassVar[int]
    OUTSIDE_FRESHNESS_WINDOW_FIELD_NUMBER: _ClassVar[int]
    chunks_restored: int
    outside_freshness_window: bool
    def __init__(self, chunks_restored: _Optional[int] = ..., outside_freshness_window: _Optional[bool] = ...) -> None: ...
