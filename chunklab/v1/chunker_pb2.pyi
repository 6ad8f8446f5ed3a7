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

class KnobType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KNOB_TYPE_UNSPECIFIED: _ClassVar[KnobType]
    KNOB_TYPE_INT: _ClassVar[KnobType]
    KNOB_TYPE_DOUBLE: _ClassVar[KnobType]
    KNOB_TYPE_STRING: _ClassVar[KnobType]
    KNOB_TYPE_BOOL: _ClassVar[KnobType]
    KNOB_TYPE_CHOICE: _ClassVar[KnobType]

class StrategyPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRATEGY_PHASE_UNSPECIFIED: _ClassVar[StrategyPhase]
    STRATEGY_PHASE_STARTED: _ClassVar[StrategyPhase]
    STRATEGY_PHASE_RUNNING: _ClassVar[StrategyPhase]
    STRATEGY_PHASE_COMPLETED: _ClassVar[StrategyPhase]
    STRATEGY_PHASE_FAILED: _ClassVar[StrategyPhase]
KNOB_TYPE_UNSPECIFIED: KnobType
KNOB_TYPE_INT: KnobType
KNOB_TYPE_DOUBLE: KnobType
KNOB_TYPE_STRING: KnobType
KNOB_TYPE_BOOL: KnobType
KNOB_TYPE_CHOICE: KnobType
STRATEGY_PHASE_UNSPECIFIED: StrategyPhase
STRATEGY_PHASE_STARTED: StrategyPhase
STRATEGY_PHASE_RUNNING: StrategyPhase
STRATEGY_PHASE_COMPLETED: StrategyPhase
STRATEGY_PHASE_FAILED: StrategyPhase

class ListStrategiesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class KnobSpec(_message.Message):
    __slots__ = ("name", "description", "type", "default_value", "min_value", "max_value", "choices", "query_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    MIN_VALUE_FIELD_NUMBER: _ClassVar[int]
    MAX_VALUE_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    QUERY_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    type: KnobType
    default_value: _common_pb2.KnobValue
    min_value: float
    max_value: float
    choices: _containers.RepeatedScalarFieldContainer[str]
    query_time: bool
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., type: _Optional[_Union[KnobType, str]] = ..., default_value: _Optional[_Union[_common_pb2.KnobValue, _Mapping]] = ..., min_value: _Optional[float] = ..., max_value: _Optional[float] = ..., choices: _Optional[_Iterable[str]] = ..., query_time: _Optional[bool] = ...) -> None: ...

class StrategyInfo(_message.Message):
    __slots__ = ("name", "description", "knobs", "requires_llm", "requires_embeddings_to_chunk", "expansion")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    KNOBS_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_LLM_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_EMBEDDINGS_TO_CHUNK_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    knobs: _containers.RepeatedCompositeFieldContainer[KnobSpec]
    requires_llm: bool
    requires_embeddings_to_chunk: bool
    expansion: _common_pb2.ExpansionKind
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., knobs: _Optional[_Iterable[_Union[KnobSpec, _Mapping]]] = ..., requires_llm: _Optional[bool] = ..., requires_embeddings_to_chunk: _Optional[bool] = ..., expansion: _Optional[_Union[_common_pb2.ExpansionKind, str]] = ...) -> None: ...

class ListStrategiesResponse(_message.Message):
    __slots__ = ("strategies", "embedding_models", "llm")
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODELS_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    strategies: _containers.RepeatedCompositeFieldContainer[StrategyInfo]
    embedding_models: _containers.RepeatedScalarFieldContainer[str]
    llm: str
    def __init__(self, strategies: _Optional[_Iterable[_Union[StrategyInfo, _Mapping]]] = ..., embedding_models: _Optional[_Iterable[str]] = ..., llm: _Optional[str] = ...) -> None: ...

class LLMChoice(_message.Message):
    __slots__ = ("base_url", "model", "api_key")
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    base_url: str
    model: str
    api_key: str
    def __init__(self, base_url: _Optional[str] = ..., model: _Optional[str] = ..., api_key: _Optional[str] = ...) -> None: ...

class ProcessDocumentRequest(_message.Message):
    __slots__ = ("document_id", "strategies", "embedding_model", "llm", "activation")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    ACTIVATION_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    strategies: _containers.RepeatedCompositeFieldContainer[_common_pb2.StrategySpec]
    embedding_model: str
    llm: LLMChoice
    activation: _common_pb2.Activation
    def __init__(self, document_id: _Optional[str] = ..., strategies: _Optional[_Iterable[_Union[_common_pb2.StrategySpec, _Mapping]]] = ..., embedding_model: _Optional[str] = ..., llm: _Optional[_Union[LLMChoice, _Mapping]] = ..., activation: _Optional[_Union[_common_pb2.Activation, str]] = ...) -> None: ...

class StrategyProgress(_message.Message):
    __slots__ = ("strategy", "phase", "fraction_done", "message", "chunk_count", "seconds", "error", "embeddings_cached", "usage")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    FRACTION_DONE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_CACHED_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    phase: StrategyPhase
    fraction_done: float
    message: str
    chunk_count: int
    seconds: float
    error: str
    embeddings_cached: int
    usage: _common_pb2.TokenUsage
    def __init__(self, strategy: _Optional[str] = ..., phase: _Optional[_Union[StrategyPhase, str]] = ..., fraction_done: _Optional[float] = ..., message: _Optional[str] = ..., chunk_count: _Optional[int] = ..., seconds: _Optional[float] = ..., error: _Optional[str] = ..., embeddings_cached: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...

class StrategyFailure(_message.Message):
    __slots__ = ("strategy", "reason")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    reason: str
    def __init__(self, strategy: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class StrategyOutcome(_message.Message):
    __slots__ = ("strategy", "config_id", "chunk_count", "seconds", "embeddings_cached", "usage", "phases")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_CACHED_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    config_id: str
    chunk_count: int
    seconds: float
    embeddings_cached: int
    usage: _common_pb2.TokenUsage
    phases: _common_pb2.ProcessingPhases
    def __init__(self, strategy: _Optional[str] = ..., config_id: _Optional[str] = ..., chunk_count: _Optional[int] = ..., seconds: _Optional[float] = ..., embeddings_cached: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., phases: _Optional[_Union[_common_pb2.ProcessingPhases, _Mapping]] = ...) -> None: ...

class ProcessDocumentResult(_message.Message):
    __slots__ = ("document_id", "embedding_model", "strategies_completed", "strategies_failed", "llm")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_FAILED_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    embedding_model: str
    strategies_completed: _containers.RepeatedCompositeFieldContainer[StrategyOutcome]
    strategies_failed: _containers.RepeatedCompositeFieldContainer[StrategyFailure]
    llm: str
    def __init__(self, document_id: _Optional[str] = ..., embedding_model: _Optional[str] = ..., strategies_completed: _Optional[_Iterable[_Union[StrategyOutcome, _Mapping]]] = ..., strategies_failed: _Optional[_Iterable[_Union[StrategyFailure, _Mapping]]] = ..., llm: _Optional[str] = ...) -> None: ...

class ProcessDocumentEvent(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: StrategyProgress
    result: ProcessDocumentResult
    def __init__(self, progress: _Optional[_Union[StrategyProgress, _Mapping]] = ..., result: _Optional[_Union[ProcessDocumentResult, _Mapping]] = ...) -> None: ...

class PreviewChunksRequest(_message.Message):
    __slots__ = ("document_id", "strategy", "embedding_model", "llm")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    strategy: _common_pb2.StrategySpec
    embedding_model: str
    llm: LLMChoice
    def __init__(self, document_id: _Optional[str] = ..., strategy: _Optional[_Union[_common_pb2.StrategySpec, _Mapping]] = ..., embedding_model: _Optional[str] = ..., llm: _Optional[_Union[LLMChoice, _Mapping]] = ...) -> None: ...

class PreviewChunksResponse(_message.Message):
    __slots__ = ("chunks", "config_id", "usage")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.Chunk]
    config_id: str
    usage: _common_pb2.TokenUsage
    def __init__(self, chunks: _Optional[_Iterable[_Union[_common_pb2.Chunk, _Mapping]]] = ..., config_id: _Optional[str] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...

class SubmitBulkLoadRequest(_message.Message):
    __slots__ = ("document_ids", "strategies", "embedding_model", "llm")
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    LLM_FIELD_NUMBER: _ClassVar[int]
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    strategies: _containers.RepeatedCompositeFieldContainer[_common_pb2.StrategySpec]
    embedding_model: str
    llm: LLMChoice
    def __init__(self, document_ids: _Optional[_Iterable[str]] = ..., strategies: _Optional[_Iterable[_Union[_common_pb2.StrategySpec, _Mapping]]] = ..., embedding_model: _Optional[str] = ..., llm: _Optional[_Union[LLMChoice, _Mapping]] = ...) -> None: ...

class BulkLoadJob(_message.Message):
    __slots__ = ("job_id", "bulk_load_id", "request")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    BULK_LOAD_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    bulk_load_id: str
    request: ProcessDocumentRequest
    def __init__(self, job_id: _Optional[str] = ..., bulk_load_id: _Optional[str] = ..., request: _Optional[_Union[ProcessDocumentRequest, _Mapping]] = ...) -> None: ...

class BulkLoadJobResult(_message.Message):
    __slots__ = ("job_id", "document_id", "result", "error", "deliveries", "worker", "finished_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    document_id: str
    result: ProcessDocumentResult
    error: str
    deliveries: int
    worker: str
    finished_at: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[str] = ..., document_id: _Optional[str] = ..., result: _Optional[_Union[ProcessDocumentResult, _Mapping]] = ..., error: _Optional[str] = ..., deliveries: _Optional[int] = ..., worker: _Optional[str] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetBulkLoadRequest(_message.Message):
    __slots__ = ("bulk_load_id",)
    BULK_LOAD_ID_FIELD_NUMBER: _ClassVar[int]
    bulk_load_id: str
    def __init__(self, bulk_load_id: _Optional[str] = ...) -> None: ...

class CancelBulkLoadRequest(_message.Message):
    __slots__ = ("bulk_load_id",)
    BULK_LOAD_ID_FIELD_NUMBER: _ClassVar[int]
    bulk_load_id: str
    def __init__(self, bulk_load_id: _Optional[str] = ...) -> None: ...

class ListBulkLoadsRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class ListBulkLoadsResponse(_message.Message):
    __slots__ = ("bulk_loads",)
    BULK_LOADS_FIELD_NUMBER: _ClassVar[int]
    bulk_loads: _containers.RepeatedCompositeFieldContainer[BulkLoad]
    def __init__(self, bulk_loads: _Optional[_Iterable[_Union[BulkLoad, _Mapping]]] = ...) -> None: ...

class BulkLoad(_message.Message):
    __slots__ = ("bulk_load_id", "jobs_total", "results", "broker", "submitted_at", "jobs_queued", "cancelled", "jobs_finished", "jobs_failed")
    BULK_LOAD_ID_FIELD_NUMBER: _ClassVar[int]
    JOBS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    BROKER_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    JOBS_QUEUED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    JOBS_FINISHED_FIELD_NUMBER: _ClassVar[int]
    JOBS_FAILED_FIELD_NUMBER: _ClassVar[int]
    bulk_load_id: str
    jobs_total: int
    results: _containers.RepeatedCompositeFieldContainer[BulkLoadJobResult]
    broker: str
    submitted_at: _timestamp_pb2.Timestamp
    jobs_queued: int
    cancelled: bool
    jobs_finished: int
    jobs_failed: int
    def __init__(self, bulk_load_id: _Optional[str] = ..., jobs_total: _Optional[int] = ..., results: _Optional[_Iterable[_Union[BulkLoadJobResult, _Mapping]]] = ..., broker: _Optional[str] = ..., submitted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., jobs_queued: _Optional[int] = ..., cancelled: _Optional[bool] = ..., jobs_finished: _Optional[int] = ..., jobs_failed: _Optional[int] = ...) -> None: ...
