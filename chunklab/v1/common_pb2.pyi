import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChunkRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHUNK_ROLE_UNSPECIFIED: _ClassVar[ChunkRole]
    CHUNK_ROLE_CHUNK: _ClassVar[ChunkRole]
    CHUNK_ROLE_SENTENCE: _ClassVar[ChunkRole]
    CHUNK_ROLE_CHILD: _ClassVar[ChunkRole]
    CHUNK_ROLE_PARENT: _ClassVar[ChunkRole]

class ExpansionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPANSION_KIND_UNSPECIFIED: _ClassVar[ExpansionKind]
    EXPANSION_KIND_NONE: _ClassVar[ExpansionKind]
    EXPANSION_KIND_NEIGHBORS: _ClassVar[ExpansionKind]
    EXPANSION_KIND_WINDOW: _ClassVar[ExpansionKind]
    EXPANSION_KIND_PARENT: _ClassVar[ExpansionKind]

class Activation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTIVATION_UNSPECIFIED: _ClassVar[Activation]
    ACTIVATION_MAKE_ACTIVE: _ClassVar[Activation]
    ACTIVATION_KEEP_CURRENT: _ClassVar[Activation]

class RerankerKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RERANKER_KIND_UNSPECIFIED: _ClassVar[RerankerKind]
    RERANKER_KIND_CROSS_ENCODER: _ClassVar[RerankerKind]
    RERANKER_KIND_HTTP: _ClassVar[RerankerKind]
    RERANKER_KIND_TEI: _ClassVar[RerankerKind]
    RERANKER_KIND_LLM: _ClassVar[RerankerKind]

class ChunkLabel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHUNK_LABEL_UNSPECIFIED: _ClassVar[ChunkLabel]
    CHUNK_LABEL_HIT: _ClassVar[ChunkLabel]
    CHUNK_LABEL_NEIGHBOR: _ClassVar[ChunkLabel]
    CHUNK_LABEL_WINDOW: _ClassVar[ChunkLabel]
    CHUNK_LABEL_PARENT: _ClassVar[ChunkLabel]
CHUNK_ROLE_UNSPECIFIED: ChunkRole
CHUNK_ROLE_CHUNK: ChunkRole
CHUNK_ROLE_SENTENCE: ChunkRole
CHUNK_ROLE_CHILD: ChunkRole
CHUNK_ROLE_PARENT: ChunkRole
EXPANSION_KIND_UNSPECIFIED: ExpansionKind
EXPANSION_KIND_NONE: ExpansionKind
EXPANSION_KIND_NEIGHBORS: ExpansionKind
EXPANSION_KIND_WINDOW: ExpansionKind
EXPANSION_KIND_PARENT: ExpansionKind
ACTIVATION_UNSPECIFIED: Activation
ACTIVATION_MAKE_ACTIVE: Activation
ACTIVATION_KEEP_CURRENT: Activation
RERANKER_KIND_UNSPECIFIED: RerankerKind
RERANKER_KIND_CROSS_ENCODER: RerankerKind
RERANKER_KIND_HTTP: RerankerKind
RERANKER_KIND_TEI: RerankerKind
RERANKER_KIND_LLM: RerankerKind
CHUNK_LABEL_UNSPECIFIED: ChunkLabel
CHUNK_LABEL_HIT: ChunkLabel
CHUNK_LABEL_NEIGHBOR: ChunkLabel
CHUNK_LABEL_WINDOW: ChunkLabel
CHUNK_LABEL_PARENT: ChunkLabel

class Chunk(_message.Message):
    __slots__ = ("chunk_id", "document_id", "document_name", "strategy", "config_id", "chunk_index", "content", "token_count", "character_count", "start_char", "end_char", "heading_path", "parent_id", "enriched_content", "language", "collection", "published_at", "ingested_at", "indexed_at", "embedding_model", "role", "first_page", "last_page")
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_COUNT_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    HEADING_PATH_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENRICHED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    INGESTED_AT_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    FIRST_PAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_PAGE_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    document_id: str
    document_name: str
    strategy: str
    config_id: str
    chunk_index: int
    content: str
    token_count: int
    character_count: int
    start_char: int
    end_char: int
    heading_path: _containers.RepeatedScalarFieldContainer[str]
    parent_id: str
    enriched_content: str
    language: str
    collection: str
    published_at: _timestamp_pb2.Timestamp
    ingested_at: _timestamp_pb2.Timestamp
    indexed_at: _timestamp_pb2.Timestamp
    embedding_model: str
    role: ChunkRole
    first_page: int
    last_page: int
    def __init__(self, chunk_id: _Optional[str] = ..., document_id: _Optional[str] = ..., document_name: _Optional[str] = ..., strategy: _Optional[str] = ..., config_id: _Optional[str] = ..., chunk_index: _Optional[int] = ..., content: _Optional[str] = ..., token_count: _Optional[int] = ..., character_count: _Optional[int] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., heading_path: _Optional[_Iterable[str]] = ..., parent_id: _Optional[str] = ..., enriched_content: _Optional[str] = ..., language: _Optional[str] = ..., collection: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ingested_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedding_model: _Optional[str] = ..., role: _Optional[_Union[ChunkRole, str]] = ..., first_page: _Optional[int] = ..., last_page: _Optional[int] = ...) -> None: ...

class KnobValue(_message.Message):
    __slots__ = ("int_value", "double_value", "string_value", "bool_value")
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    int_value: int
    double_value: float
    string_value: str
    bool_value: bool
    def __init__(self, int_value: _Optional[int] = ..., double_value: _Optional[float] = ..., string_value: _Optional[str] = ..., bool_value: _Optional[bool] = ...) -> None: ...

class StrategySpec(_message.Message):
    __slots__ = ("name", "knobs")
    class KnobsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: KnobValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[KnobValue, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    KNOBS_FIELD_NUMBER: _ClassVar[int]
    name: str
    knobs: _containers.MessageMap[str, KnobValue]
    def __init__(self, name: _Optional[str] = ..., knobs: _Optional[_Mapping[str, KnobValue]] = ...) -> None: ...

class RetrievalFilter(_message.Message):
    __slots__ = ("document_ids", "collections", "languages")
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    collections: _containers.RepeatedScalarFieldContainer[str]
    languages: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, document_ids: _Optional[_Iterable[str]] = ..., collections: _Optional[_Iterable[str]] = ..., languages: _Optional[_Iterable[str]] = ...) -> None: ...

class RetrievalOptions(_message.Message):
    __slots__ = ("strategy", "config_id", "top_k", "neighbor_prev", "neighbor_next", "window", "filter", "embedding_model", "hybrid", "recency_lambda", "rerank", "fusion_k")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOR_PREV_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOR_NEXT_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    HYBRID_FIELD_NUMBER: _ClassVar[int]
    RECENCY_LAMBDA_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    FUSION_K_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    config_id: str
    top_k: int
    neighbor_prev: int
    neighbor_next: int
    window: int
    filter: RetrievalFilter
    embedding_model: str
    hybrid: bool
    recency_lambda: float
    rerank: RerankOptions
    fusion_k: int
    def __init__(self, strategy: _Optional[str] = ..., config_id: _Optional[str] = ..., top_k: _Optional[int] = ..., neighbor_prev: _Optional[int] = ..., neighbor_next: _Optional[int] = ..., window: _Optional[int] = ..., filter: _Optional[_Union[RetrievalFilter, _Mapping]] = ..., embedding_model: _Optional[str] = ..., hybrid: _Optional[bool] = ..., recency_lambda: _Optional[float] = ..., rerank: _Optional[_Union[RerankOptions, _Mapping]] = ..., fusion_k: _Optional[int] = ...) -> None: ...

class RerankOptions(_message.Message):
    __slots__ = ("kind", "depth", "model", "base_url")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    kind: RerankerKind
    depth: int
    model: str
    base_url: str
    def __init__(self, kind: _Optional[_Union[RerankerKind, str]] = ..., depth: _Optional[int] = ..., model: _Optional[str] = ..., base_url: _Optional[str] = ...) -> None: ...

class RetrievalLimits(_message.Message):
    __slots__ = ("max_top_k", "default_top_k", "max_neighbors", "max_window", "max_recency_lambda", "max_filter_values", "max_rerank_depth", "default_rerank_depth", "max_freshness_days", "max_fusion_k", "default_fusion_k")
    MAX_TOP_K_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TOP_K_FIELD_NUMBER: _ClassVar[int]
    MAX_NEIGHBORS_FIELD_NUMBER: _ClassVar[int]
    MAX_WINDOW_FIELD_NUMBER: _ClassVar[int]
    MAX_RECENCY_LAMBDA_FIELD_NUMBER: _ClassVar[int]
    MAX_FILTER_VALUES_FIELD_NUMBER: _ClassVar[int]
    MAX_RERANK_DEPTH_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_RERANK_DEPTH_FIELD_NUMBER: _ClassVar[int]
    MAX_FRESHNESS_DAYS_FIELD_NUMBER: _ClassVar[int]
    MAX_FUSION_K_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_FUSION_K_FIELD_NUMBER: _ClassVar[int]
    max_top_k: int
    default_top_k: int
    max_neighbors: int
    max_window: int
    max_recency_lambda: float
    max_filter_values: int
    max_rerank_depth: int
    default_rerank_depth: int
    max_freshness_days: int
    max_fusion_k: int
    default_fusion_k: int
    def __init__(self, max_top_k: _Optional[int] = ..., default_top_k: _Optional[int] = ..., max_neighbors: _Optional[int] = ..., max_window: _Optional[int] = ..., max_recency_lambda: _Optional[float] = ..., max_filter_values: _Optional[int] = ..., max_rerank_depth: _Optional[int] = ..., default_rerank_depth: _Optional[int] = ..., max_freshness_days: _Optional[int] = ..., max_fusion_k: _Optional[int] = ..., default_fusion_k: _Optional[int] = ...) -> None: ...

class RetrievedChunk(_message.Message):
    __slots__ = ("chunk", "label", "score", "rank", "rerank_score")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    RERANK_SCORE_FIELD_NUMBER: _ClassVar[int]
    chunk: Chunk
    label: ChunkLabel
    score: float
    rank: int
    rerank_score: float
    def __init__(self, chunk: _Optional[_Union[Chunk, _Mapping]] = ..., label: _Optional[_Union[ChunkLabel, str]] = ..., score: _Optional[float] = ..., rank: _Optional[int] = ..., rerank_score: _Optional[float] = ...) -> None: ...

class ExpansionNode(_message.Message):
    __slots__ = ("hit", "neighbors_prev", "neighbors_next", "window", "parent")
    HIT_FIELD_NUMBER: _ClassVar[int]
    NEIGHBORS_PREV_FIELD_NUMBER: _ClassVar[int]
    NEIGHBORS_NEXT_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    hit: RetrievedChunk
    neighbors_prev: _containers.RepeatedCompositeFieldContainer[RetrievedChunk]
    neighbors_next: _containers.RepeatedCompositeFieldContainer[RetrievedChunk]
    window: _containers.RepeatedCompositeFieldContainer[RetrievedChunk]
    parent: RetrievedChunk
    def __init__(self, hit: _Optional[_Union[RetrievedChunk, _Mapping]] = ..., neighbors_prev: _Optional[_Iterable[_Union[RetrievedChunk, _Mapping]]] = ..., neighbors_next: _Optional[_Iterable[_Union[RetrievedChunk, _Mapping]]] = ..., window: _Optional[_Iterable[_Union[RetrievedChunk, _Mapping]]] = ..., parent: _Optional[_Union[RetrievedChunk, _Mapping]] = ...) -> None: ...

class ExpansionTree(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[ExpansionNode]
    def __init__(self, hits: _Optional[_Iterable[_Union[ExpansionNode, _Mapping]]] = ...) -> None: ...

class ProcessingPhases(_message.Message):
    __slots__ = ("chunk_seconds", "embed_seconds", "index_seconds")
    CHUNK_SECONDS_FIELD_NUMBER: _ClassVar[int]
    EMBED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    INDEX_SECONDS_FIELD_NUMBER: _ClassVar[int]
    chunk_seconds: float
    embed_seconds: float
    index_seconds: float
    def __init__(self, chunk_seconds: _Optional[float] = ..., embed_seconds: _Optional[float] = ..., index_seconds: _Optional[float] = ...) -> None: ...

class TokenUsage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "embedding_tokens", "llm_calls", "estimated_cost_usd")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    embedding_tokens: int
    llm_calls: int
    estimated_cost_usd: float
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., embedding_tokens: _Optional[int] = ..., llm_calls: _Optional[int] = ..., estimated_cost_usd: _Optional[float] = ...) -> None: ...
