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

class ExcerptCheck(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXCERPT_CHECK_UNSPECIFIED: _ClassVar[ExcerptCheck]
    EXCERPT_CHECK_STRICT: _ClassVar[ExcerptCheck]
    EXCERPT_CHECK_LENIENT: _ClassVar[ExcerptCheck]

class ExcerptProblemKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXCERPT_PROBLEM_KIND_UNSPECIFIED: _ClassVar[ExcerptProblemKind]
    EXCERPT_PROBLEM_KIND_SNAPPED: _ClassVar[ExcerptProblemKind]
    EXCERPT_PROBLEM_KIND_NOT_FOUND: _ClassVar[ExcerptProblemKind]
    EXCERPT_PROBLEM_KIND_RANGE_MISMATCH: _ClassVar[ExcerptProblemKind]
    EXCERPT_PROBLEM_KIND_BAD_RANGE: _ClassVar[ExcerptProblemKind]
    EXCERPT_PROBLEM_KIND_EMPTY: _ClassVar[ExcerptProblemKind]

class QuestionSetFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUESTION_SET_FORMAT_UNSPECIFIED: _ClassVar[QuestionSetFormat]
    QUESTION_SET_FORMAT_JSONL: _ClassVar[QuestionSetFormat]
    QUESTION_SET_FORMAT_CSV: _ClassVar[QuestionSetFormat]

class GenerationOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GENERATION_OUTCOME_UNSPECIFIED: _ClassVar[GenerationOutcome]
    GENERATION_OUTCOME_KEPT: _ClassVar[GenerationOutcome]
    GENERATION_OUTCOME_DROPPED: _ClassVar[GenerationOutcome]
    GENERATION_OUTCOME_FAILED: _ClassVar[GenerationOutcome]

class DropReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DROP_REASON_UNSPECIFIED: _ClassVar[DropReason]
    DROP_REASON_EXCERPT_NOT_FOUND: _ClassVar[DropReason]
    DROP_REASON_DUPLICATE: _ClassVar[DropReason]
    DROP_REASON_ANSWERED_BY_QUESTION: _ClassVar[DropReason]
    DROP_REASON_EXCERPT_TOO_LONG: _ClassVar[DropReason]
    DROP_REASON_NO_EXCERPT: _ClassVar[DropReason]

class GenerationState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GENERATION_STATE_UNSPECIFIED: _ClassVar[GenerationState]
    GENERATION_STATE_RUNNING: _ClassVar[GenerationState]
    GENERATION_STATE_SUCCEEDED: _ClassVar[GenerationState]
    GENERATION_STATE_INTERRUPTED: _ClassVar[GenerationState]
    GENERATION_STATE_FAILED: _ClassVar[GenerationState]

class ExperimentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPERIMENT_STATE_UNSPECIFIED: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_PENDING: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_RUNNING: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_SUCCEEDED: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_FAILED: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_INTERRUPTED: _ClassVar[ExperimentState]
    EXPERIMENT_STATE_PARTIAL: _ClassVar[ExperimentState]

class StudyObjectiveKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STUDY_OBJECTIVE_KIND_UNSPECIFIED: _ClassVar[StudyObjectiveKind]
    STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS: _ClassVar[StudyObjectiveKind]
    STUDY_OBJECTIVE_KIND_IOU_AT_RECALL: _ClassVar[StudyObjectiveKind]
    STUDY_OBJECTIVE_KIND_PARETO: _ClassVar[StudyObjectiveKind]

class ValidationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VALIDATION_MODE_UNSPECIFIED: _ClassVar[ValidationMode]
    VALIDATION_MODE_NONE: _ClassVar[ValidationMode]
    VALIDATION_MODE_HOLDOUT: _ClassVar[ValidationMode]
    VALIDATION_MODE_K_FOLD: _ClassVar[ValidationMode]

class ReportView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPORT_VIEW_UNSPECIFIED: _ClassVar[ReportView]
    REPORT_VIEW_BOTH: _ClassVar[ReportView]
    REPORT_VIEW_MANAGERIAL: _ClassVar[ReportView]
    REPORT_VIEW_TECHNICAL: _ClassVar[ReportView]

class MetricUnit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    METRIC_UNIT_UNSPECIFIED: _ClassVar[MetricUnit]
    METRIC_UNIT_PERCENT: _ClassVar[MetricUnit]
    METRIC_UNIT_RATIO: _ClassVar[MetricUnit]
    METRIC_UNIT_SCORE: _ClassVar[MetricUnit]
    METRIC_UNIT_MILLISECONDS: _ClassVar[MetricUnit]
    METRIC_UNIT_COUNT: _ClassVar[MetricUnit]
    METRIC_UNIT_USD: _ClassVar[MetricUnit]
EXCERPT_CHECK_UNSPECIFIED: ExcerptCheck
EXCERPT_CHECK_STRICT: ExcerptCheck
EXCERPT_CHECK_LENIENT: ExcerptCheck
EXCERPT_PROBLEM_KIND_UNSPECIFIED: ExcerptProblemKind
EXCERPT_PROBLEM_KIND_SNAPPED: ExcerptProblemKind
EXCERPT_PROBLEM_KIND_NOT_FOUND: ExcerptProblemKind
EXCERPT_PROBLEM_KIND_RANGE_MISMATCH: ExcerptProblemKind
EXCERPT_PROBLEM_KIND_BAD_RANGE: ExcerptProblemKind
EXCERPT_PROBLEM_KIND_EMPTY: ExcerptProblemKind
QUESTION_SET_FORMAT_UNSPECIFIED: QuestionSetFormat
QUESTION_SET_FORMAT_JSONL: QuestionSetFormat
QUESTION_SET_FORMAT_CSV: QuestionSetFormat
GENERATION_OUTCOME_UNSPECIFIED: GenerationOutcome
GENERATION_OUTCOME_KEPT: GenerationOutcome
GENERATION_OUTCOME_DROPPED: GenerationOutcome
GENERATION_OUTCOME_FAILED: GenerationOutcome
DROP_REASON_UNSPECIFIED: DropReason
DROP_REASON_EXCERPT_NOT_FOUND: DropReason
DROP_REASON_DUPLICATE: DropReason
DROP_REASON_ANSWERED_BY_QUESTION: DropReason
DROP_REASON_EXCERPT_TOO_LONG: DropReason
DROP_REASON_NO_EXCERPT: DropReason
GENERATION_STATE_UNSPECIFIED: GenerationState
GENERATION_STATE_RUNNING: GenerationState
GENERATION_STATE_SUCCEEDED: GenerationState
GENERATION_STATE_INTERRUPTED: GenerationState
GENERATION_STATE_FAILED: GenerationState
EXPERIMENT_STATE_UNSPECIFIED: ExperimentState
EXPERIMENT_STATE_PENDING: ExperimentState
EXPERIMENT_STATE_RUNNING: ExperimentState
EXPERIMENT_STATE_SUCCEEDED: ExperimentState
EXPERIMENT_STATE_FAILED: ExperimentState
EXPERIMENT_STATE_INTERRUPTED: ExperimentState
EXPERIMENT_STATE_PARTIAL: ExperimentState
STUDY_OBJECTIVE_KIND_UNSPECIFIED: StudyObjectiveKind
STUDY_OBJECTIVE_KIND_RECALL_AT_TOKENS: StudyObjectiveKind
STUDY_OBJECTIVE_KIND_IOU_AT_RECALL: StudyObjectiveKind
STUDY_OBJECTIVE_KIND_PARETO: StudyObjectiveKind
VALIDATION_MODE_UNSPECIFIED: ValidationMode
VALIDATION_MODE_NONE: ValidationMode
VALIDATION_MODE_HOLDOUT: ValidationMode
VALIDATION_MODE_K_FOLD: ValidationMode
REPORT_VIEW_UNSPECIFIED: ReportView
REPORT_VIEW_BOTH: ReportView
REPORT_VIEW_MANAGERIAL: ReportView
REPORT_VIEW_TECHNICAL: ReportView
METRIC_UNIT_UNSPECIFIED: MetricUnit
METRIC_UNIT_PERCENT: MetricUnit
METRIC_UNIT_RATIO: MetricUnit
METRIC_UNIT_SCORE: MetricUnit
METRIC_UNIT_MILLISECONDS: MetricUnit
METRIC_UNIT_COUNT: MetricUnit
METRIC_UNIT_USD: MetricUnit

class Reference(_message.Message):
    __slots__ = ("document_id", "start_char", "end_char", "content")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    start_char: int
    end_char: int
    content: str
    def __init__(self, document_id: _Optional[str] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., content: _Optional[str] = ...) -> None: ...

class Question(_message.Message):
    __slots__ = ("question_id", "text", "expected_answer", "references", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ANSWER_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    text: str
    expected_answer: str
    references: _containers.RepeatedCompositeFieldContainer[Reference]
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, question_id: _Optional[str] = ..., text: _Optional[str] = ..., expected_answer: _Optional[str] = ..., references: _Optional[_Iterable[_Union[Reference, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class QuestionSet(_message.Message):
    __slots__ = ("question_set_id", "name", "description", "content_hash", "question_count", "created_at", "questions", "validation", "provenance")
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    QUESTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    name: str
    description: str
    content_hash: str
    question_count: int
    created_at: _timestamp_pb2.Timestamp
    questions: _containers.RepeatedCompositeFieldContainer[Question]
    validation: QuestionSetValidation
    provenance: QuestionSetProvenance
    def __init__(self, question_set_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., content_hash: _Optional[str] = ..., question_count: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., questions: _Optional[_Iterable[_Union[Question, _Mapping]]] = ..., validation: _Optional[_Union[QuestionSetValidation, _Mapping]] = ..., provenance: _Optional[_Union[QuestionSetProvenance, _Mapping]] = ...) -> None: ...

class QuestionSetProvenance(_message.Message):
    __slots__ = ("origin", "generation_id", "generator_model", "prompt_version", "seed", "document_hashes", "questions_requested", "embedding_model", "duplicate_similarity", "code_version")
    class DocumentHashesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    GENERATION_ID_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    PROMPT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_HASHES_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    CODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    origin: str
    generation_id: str
    generator_model: str
    prompt_version: str
    seed: int
    document_hashes: _containers.ScalarMap[str, str]
    questions_requested: int
    embedding_model: str
    duplicate_similarity: float
    code_version: str
    def __init__(self, origin: _Optional[str] = ..., generation_id: _Optional[str] = ..., generator_model: _Optional[str] = ..., prompt_version: _Optional[str] = ..., seed: _Optional[int] = ..., document_hashes: _Optional[_Mapping[str, str]] = ..., questions_requested: _Optional[int] = ..., embedding_model: _Optional[str] = ..., duplicate_similarity: _Optional[float] = ..., code_version: _Optional[str] = ...) -> None: ...

class ExcerptProblem(_message.Message):
    __slots__ = ("where", "question_number", "line", "reference_number", "document_id", "excerpt", "kind", "start_char", "end_char", "suggested_content", "similarity", "message", "left_out")
    WHERE_FIELD_NUMBER: _ClassVar[int]
    QUESTION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    where: str
    question_number: int
    line: int
    reference_number: int
    document_id: str
    excerpt: str
    kind: ExcerptProblemKind
    start_char: int
    end_char: int
    suggested_content: str
    similarity: float
    message: str
    left_out: bool
    def __init__(self, where: _Optional[str] = ..., question_number: _Optional[int] = ..., line: _Optional[int] = ..., reference_number: _Optional[int] = ..., document_id: _Optional[str] = ..., excerpt: _Optional[str] = ..., kind: _Optional[_Union[ExcerptProblemKind, str]] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., suggested_content: _Optional[str] = ..., similarity: _Optional[float] = ..., message: _Optional[str] = ..., left_out: _Optional[bool] = ...) -> None: ...

class QuestionSetValidation(_message.Message):
    __slots__ = ("excerpt_check", "questions_total", "questions_valid", "questions_left_out", "references_total", "references_exact", "references_snapped", "references_failed", "problems", "similarity_threshold")
    EXCERPT_CHECK_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_VALID_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_EXACT_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_SNAPPED_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_FAILED_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    excerpt_check: ExcerptCheck
    questions_total: int
    questions_valid: int
    questions_left_out: int
    references_total: int
    references_exact: int
    references_snapped: int
    references_failed: int
    problems: _containers.RepeatedCompositeFieldContainer[ExcerptProblem]
    similarity_threshold: float
    def __init__(self, excerpt_check: _Optional[_Union[ExcerptCheck, str]] = ..., questions_total: _Optional[int] = ..., questions_valid: _Optional[int] = ..., questions_left_out: _Optional[int] = ..., references_total: _Optional[int] = ..., references_exact: _Optional[int] = ..., references_snapped: _Optional[int] = ..., references_failed: _Optional[int] = ..., problems: _Optional[_Iterable[_Union[ExcerptProblem, _Mapping]]] = ..., similarity_threshold: _Optional[float] = ...) -> None: ...

class CreateQuestionSetRequest(_message.Message):
    __slots__ = ("name", "description", "questions", "excerpt_check")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_CHECK_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    questions: _containers.RepeatedCompositeFieldContainer[Question]
    excerpt_check: ExcerptCheck
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., questions: _Optional[_Iterable[_Union[Question, _Mapping]]] = ..., excerpt_check: _Optional[_Union[ExcerptCheck, str]] = ...) -> None: ...

class AddQuestionRequest(_message.Message):
    __slots__ = ("question_set_id", "question")
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    question: Question
    def __init__(self, question_set_id: _Optional[str] = ..., question: _Optional[_Union[Question, _Mapping]] = ...) -> None: ...

class UpdateQuestionRequest(_message.Message):
    __slots__ = ("question_set_id", "question")
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    question: Question
    def __init__(self, question_set_id: _Optional[str] = ..., question: _Optional[_Union[Question, _Mapping]] = ...) -> None: ...

class DeleteQuestionRequest(_message.Message):
    __slots__ = ("question_set_id", "question_id")
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    question_id: str
    def __init__(self, question_set_id: _Optional[str] = ..., question_id: _Optional[str] = ...) -> None: ...

class ImportHeader(_message.Message):
    __slots__ = ("name", "format", "document_ids", "excerpt_check")
    class DocumentIdsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_CHECK_FIELD_NUMBER: _ClassVar[int]
    name: str
    format: QuestionSetFormat
    document_ids: _containers.ScalarMap[str, str]
    excerpt_check: ExcerptCheck
    def __init__(self, name: _Optional[str] = ..., format: _Optional[_Union[QuestionSetFormat, str]] = ..., document_ids: _Optional[_Mapping[str, str]] = ..., excerpt_check: _Optional[_Union[ExcerptCheck, str]] = ...) -> None: ...

class ImportQuestionSetRequest(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: ImportHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[ImportHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class GenerateQuestionSetRequest(_message.Message):
    __slots__ = ("name", "description", "document_ids", "question_count", "generator_model", "seed", "dry_run", "resume_generation_id", "embedding_model")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    QUESTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    RESUME_GENERATION_ID_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    question_count: int
    generator_model: ModelEndpoint
    seed: int
    dry_run: bool
    resume_generation_id: str
    embedding_model: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., document_ids: _Optional[_Iterable[str]] = ..., question_count: _Optional[int] = ..., generator_model: _Optional[_Union[ModelEndpoint, _Mapping]] = ..., seed: _Optional[int] = ..., dry_run: _Optional[bool] = ..., resume_generation_id: _Optional[str] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class GenerationEstimate(_message.Message):
    __slots__ = ("documents", "passages", "llm_calls", "prompt_tokens", "completion_tokens", "estimated_cost_usd", "notes", "passages_done")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    documents: int
    passages: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    estimated_cost_usd: float
    notes: _containers.RepeatedScalarFieldContainer[str]
    passages_done: int
    def __init__(self, documents: _Optional[int] = ..., passages: _Optional[int] = ..., llm_calls: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., estimated_cost_usd: _Optional[float] = ..., notes: _Optional[_Iterable[str]] = ..., passages_done: _Optional[int] = ...) -> None: ...

class PassageOutcome(_message.Message):
    __slots__ = ("passage_number", "document_id", "start_char", "end_char", "outcome", "drop_reason", "problem", "question", "attempts")
    PASSAGE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DROP_REASON_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    passage_number: int
    document_id: str
    start_char: int
    end_char: int
    outcome: GenerationOutcome
    drop_reason: DropReason
    problem: str
    question: Question
    attempts: int
    def __init__(self, passage_number: _Optional[int] = ..., document_id: _Optional[str] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., outcome: _Optional[_Union[GenerationOutcome, str]] = ..., drop_reason: _Optional[_Union[DropReason, str]] = ..., problem: _Optional[str] = ..., question: _Optional[_Union[Question, _Mapping]] = ..., attempts: _Optional[int] = ...) -> None: ...

class DropCount(_message.Message):
    __slots__ = ("reason", "count")
    REASON_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    reason: DropReason
    count: int
    def __init__(self, reason: _Optional[_Union[DropReason, str]] = ..., count: _Optional[int] = ...) -> None: ...

class Generation(_message.Message):
    __slots__ = ("generation_id", "state", "request", "passages_total", "asked", "kept", "dropped", "failed", "outcomes", "question_set_id", "provenance", "usage", "error", "created_at")
    GENERATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    ASKED_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    generation_id: str
    state: GenerationState
    request: GenerateQuestionSetRequest
    passages_total: int
    asked: int
    kept: int
    dropped: _containers.RepeatedCompositeFieldContainer[DropCount]
    failed: int
    outcomes: _containers.RepeatedCompositeFieldContainer[PassageOutcome]
    question_set_id: str
    provenance: QuestionSetProvenance
    usage: _common_pb2.TokenUsage
    error: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, generation_id: _Optional[str] = ..., state: _Optional[_Union[GenerationState, str]] = ..., request: _Optional[_Union[GenerateQuestionSetRequest, _Mapping]] = ..., passages_total: _Optional[int] = ..., asked: _Optional[int] = ..., kept: _Optional[int] = ..., dropped: _Optional[_Iterable[_Union[DropCount, _Mapping]]] = ..., failed: _Optional[int] = ..., outcomes: _Optional[_Iterable[_Union[PassageOutcome, _Mapping]]] = ..., question_set_id: _Optional[str] = ..., provenance: _Optional[_Union[QuestionSetProvenance, _Mapping]] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GenerationProgress(_message.Message):
    __slots__ = ("generation_id", "passages_done", "passages_total", "kept", "dropped", "failed", "message", "outcome")
    GENERATION_ID_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    generation_id: str
    passages_done: int
    passages_total: int
    kept: int
    dropped: _containers.RepeatedCompositeFieldContainer[DropCount]
    failed: int
    message: str
    outcome: PassageOutcome
    def __init__(self, generation_id: _Optional[str] = ..., passages_done: _Optional[int] = ..., passages_total: _Optional[int] = ..., kept: _Optional[int] = ..., dropped: _Optional[_Iterable[_Union[DropCount, _Mapping]]] = ..., failed: _Optional[int] = ..., message: _Optional[str] = ..., outcome: _Optional[_Union[PassageOutcome, _Mapping]] = ...) -> None: ...

class GenerationEvent(_message.Message):
    __slots__ = ("estimate", "progress", "generation")
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    estimate: GenerationEstimate
    progress: GenerationProgress
    generation: Generation
    def __init__(self, estimate: _Optional[_Union[GenerationEstimate, _Mapping]] = ..., progress: _Optional[_Union[GenerationProgress, _Mapping]] = ..., generation: _Optional[_Union[Generation, _Mapping]] = ...) -> None: ...

class GetGenerationRequest(_message.Message):
    __slots__ = ("generation_id",)
    GENERATION_ID_FIELD_NUMBER: _ClassVar[int]
    generation_id: str
    def __init__(self, generation_id: _Optional[str] = ...) -> None: ...

class GetQuestionSetRequest(_message.Message):
    __slots__ = ("question_set_id",)
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    def __init__(self, question_set_id: _Optional[str] = ...) -> None: ...

class ListQuestionSetsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListQuestionSetsResponse(_message.Message):
    __slots__ = ("question_sets", "next_page_token")
    QUESTION_SETS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    question_sets: _containers.RepeatedCompositeFieldContainer[QuestionSet]
    next_page_token: str
    def __init__(self, question_sets: _Optional[_Iterable[_Union[QuestionSet, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteQuestionSetRequest(_message.Message):
    __slots__ = ("question_set_id",)
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    question_set_id: str
    def __init__(self, question_set_id: _Optional[str] = ...) -> None: ...

class DeleteQuestionSetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelEndpoint(_message.Message):
    __slots__ = ("base_url", "api_key", "model")
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    base_url: str
    api_key: str
    model: str
    def __init__(self, base_url: _Optional[str] = ..., api_key: _Optional[str] = ..., model: _Optional[str] = ...) -> None: ...

class AnswerRequest(_message.Message):
    __slots__ = ("question", "retrieval", "answer_model")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_MODEL_FIELD_NUMBER: _ClassVar[int]
    question: str
    retrieval: _common_pb2.RetrievalOptions
    answer_model: ModelEndpoint
    def __init__(self, question: _Optional[str] = ..., retrieval: _Optional[_Union[_common_pb2.RetrievalOptions, _Mapping]] = ..., answer_model: _Optional[_Union[ModelEndpoint, _Mapping]] = ...) -> None: ...

class AnswerEvent(_message.Message):
    __slots__ = ("context", "delta", "result")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    context: AnswerContext
    delta: str
    result: AnswerResult
    def __init__(self, context: _Optional[_Union[AnswerContext, _Mapping]] = ..., delta: _Optional[str] = ..., result: _Optional[_Union[AnswerResult, _Mapping]] = ...) -> None: ...

class AnswerContext(_message.Message):
    __slots__ = ("query_id", "retrieved_chunks", "expansion_tree")
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_TREE_FIELD_NUMBER: _ClassVar[int]
    query_id: str
    retrieved_chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.RetrievedChunk]
    expansion_tree: _common_pb2.ExpansionTree
    def __init__(self, query_id: _Optional[str] = ..., retrieved_chunks: _Optional[_Iterable[_Union[_common_pb2.RetrievedChunk, _Mapping]]] = ..., expansion_tree: _Optional[_Union[_common_pb2.ExpansionTree, _Mapping]] = ...) -> None: ...

class AnswerResult(_message.Message):
    __slots__ = ("query_id", "answer", "extractive", "model", "usage", "latency_ms")
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    EXTRACTIVE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    query_id: str
    answer: str
    extractive: bool
    model: str
    usage: _common_pb2.TokenUsage
    latency_ms: float
    def __init__(self, query_id: _Optional[str] = ..., answer: _Optional[str] = ..., extractive: _Optional[bool] = ..., model: _Optional[str] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., latency_ms: _Optional[float] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ("measured", "value", "reason")
    MEASURED_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    measured: bool
    value: float
    reason: str
    def __init__(self, measured: _Optional[bool] = ..., value: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...

class JudgeScores(_message.Message):
    __slots__ = ("context_relevance", "answer_similarity", "faithfulness", "hallucination", "judge_model", "prompt_version")
    CONTEXT_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    ANSWER_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    FAITHFULNESS_FIELD_NUMBER: _ClassVar[int]
    HALLUCINATION_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    PROMPT_VERSION_FIELD_NUMBER: _ClassVar[int]
    context_relevance: Score
    answer_similarity: Score
    faithfulness: Score
    hallucination: Score
    judge_model: str
    prompt_version: str
    def __init__(self, context_relevance: _Optional[_Union[Score, _Mapping]] = ..., answer_similarity: _Optional[_Union[Score, _Mapping]] = ..., faithfulness: _Optional[_Union[Score, _Mapping]] = ..., hallucination: _Optional[_Union[Score, _Mapping]] = ..., judge_model: _Optional[str] = ..., prompt_version: _Optional[str] = ...) -> None: ...

class RetrievalMetrics(_message.Message):
    __slots__ = ("recall_hits", "precision_hits", "iou_hits", "hit_rate_hits", "mrr_hits", "recall", "precision", "iou", "hit_rate", "mrr", "embedding_answer_similarity", "chunks_sent", "tokens_sent", "retrieve_ms", "answer_ms", "labelled", "questions", "questions_labelled", "judge_ms", "recall_at_1", "recall_at_3", "recall_at_5", "recall_at_10", "ndcg", "ndcg_at_10", "map")
    RECALL_HITS_FIELD_NUMBER: _ClassVar[int]
    PRECISION_HITS_FIELD_NUMBER: _ClassVar[int]
    IOU_HITS_FIELD_NUMBER: _ClassVar[int]
    HIT_RATE_HITS_FIELD_NUMBER: _ClassVar[int]
    MRR_HITS_FIELD_NUMBER: _ClassVar[int]
    RECALL_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    IOU_FIELD_NUMBER: _ClassVar[int]
    HIT_RATE_FIELD_NUMBER: _ClassVar[int]
    MRR_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_ANSWER_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_SENT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_SENT_FIELD_NUMBER: _ClassVar[int]
    RETRIEVE_MS_FIELD_NUMBER: _ClassVar[int]
    ANSWER_MS_FIELD_NUMBER: _ClassVar[int]
    LABELLED_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_LABELLED_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MS_FIELD_NUMBER: _ClassVar[int]
    RECALL_AT_1_FIELD_NUMBER: _ClassVar[int]
    RECALL_AT_3_FIELD_NUMBER: _ClassVar[int]
    RECALL_AT_5_FIELD_NUMBER: _ClassVar[int]
    RECALL_AT_10_FIELD_NUMBER: _ClassVar[int]
    NDCG_FIELD_NUMBER: _ClassVar[int]
    NDCG_AT_10_FIELD_NUMBER: _ClassVar[int]
    MAP_FIELD_NUMBER: _ClassVar[int]
    recall_hits: float
    precision_hits: float
    iou_hits: float
    hit_rate_hits: float
    mrr_hits: float
    recall: float
    precision: float
    iou: float
    hit_rate: float
    mrr: float
    embedding_answer_similarity: float
    chunks_sent: int
    tokens_sent: int
    retrieve_ms: float
    answer_ms: float
    labelled: bool
    questions: int
    questions_labelled: int
    judge_ms: float
    recall_at_1: float
    recall_at_3: float
    recall_at_5: float
    recall_at_10: float
    ndcg: float
    ndcg_at_10: float
    map: float
    def __init__(self, recall_hits: _Optional[float] = ..., precision_hits: _Optional[float] = ..., iou_hits: _Optional[float] = ..., hit_rate_hits: _Optional[float] = ..., mrr_hits: _Optional[float] = ..., recall: _Optional[float] = ..., precision: _Optional[float] = ..., iou: _Optional[float] = ..., hit_rate: _Optional[float] = ..., mrr: _Optional[float] = ..., embedding_answer_similarity: _Optional[float] = ..., chunks_sent: _Optional[int] = ..., tokens_sent: _Optional[int] = ..., retrieve_ms: _Optional[float] = ..., answer_ms: _Optional[float] = ..., labelled: _Optional[bool] = ..., questions: _Optional[int] = ..., questions_labelled: _Optional[int] = ..., judge_ms: _Optional[float] = ..., recall_at_1: _Optional[float] = ..., recall_at_3: _Optional[float] = ..., recall_at_5: _Optional[float] = ..., recall_at_10: _Optional[float] = ..., ndcg: _Optional[float] = ..., ndcg_at_10: _Optional[float] = ..., map: _Optional[float] = ...) -> None: ...

class QuestionResult(_message.Message):
    __slots__ = ("question_id", "question", "run_key", "retrieved_chunks", "expansion_tree", "answer", "extractive", "metrics", "judge", "usage", "error", "document_ids")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_TREE_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    EXTRACTIVE_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    question: str
    run_key: str
    retrieved_chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.RetrievedChunk]
    expansion_tree: _common_pb2.ExpansionTree
    answer: str
    extractive: bool
    metrics: RetrievalMetrics
    judge: JudgeScores
    usage: _common_pb2.TokenUsage
    error: str
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, question_id: _Optional[str] = ..., question: _Optional[str] = ..., run_key: _Optional[str] = ..., retrieved_chunks: _Optional[_Iterable[_Union[_common_pb2.RetrievedChunk, _Mapping]]] = ..., expansion_tree: _Optional[_Union[_common_pb2.ExpansionTree, _Mapping]] = ..., answer: _Optional[str] = ..., extractive: _Optional[bool] = ..., metrics: _Optional[_Union[RetrievalMetrics, _Mapping]] = ..., judge: _Optional[_Union[JudgeScores, _Mapping]] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., error: _Optional[str] = ..., document_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ExperimentRun(_message.Message):
    __slots__ = ("run_key", "retrieval", "spec", "expansion", "mean_metrics", "mean_judge", "usage", "questions_done", "config_id", "chunk_count", "processing_seconds", "processing_phases", "index_reused", "error", "questions_total", "questions_failed", "question_error", "characters_processed", "asking_seconds", "per_document", "per_collection", "trial")
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_FIELD_NUMBER: _ClassVar[int]
    MEAN_METRICS_FIELD_NUMBER: _ClassVar[int]
    MEAN_JUDGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_DONE_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    PROCESSING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PROCESSING_PHASES_FIELD_NUMBER: _ClassVar[int]
    INDEX_REUSED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FAILED_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ERROR_FIELD_NUMBER: _ClassVar[int]
    CHARACTERS_PROCESSED_FIELD_NUMBER: _ClassVar[int]
    ASKING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PER_DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    PER_COLLECTION_FIELD_NUMBER: _ClassVar[int]
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    run_key: str
    retrieval: _common_pb2.RetrievalOptions
    spec: _common_pb2.StrategySpec
    expansion: _common_pb2.ExpansionKind
    mean_metrics: RetrievalMetrics
    mean_judge: JudgeScores
    usage: _common_pb2.TokenUsage
    questions_done: int
    config_id: str
    chunk_count: int
    processing_seconds: float
    processing_phases: _common_pb2.ProcessingPhases
    index_reused: bool
    error: str
    questions_total: int
    questions_failed: int
    question_error: str
    characters_processed: int
    asking_seconds: float
    per_document: _containers.RepeatedCompositeFieldContainer[DocumentFigures]
    per_collection: _containers.RepeatedCompositeFieldContainer[DocumentFigures]
    trial: StudyTrial
    def __init__(self, run_key: _Optional[str] = ..., retrieval: _Optional[_Union[_common_pb2.RetrievalOptions, _Mapping]] = ..., spec: _Optional[_Union[_common_pb2.StrategySpec, _Mapping]] = ..., expansion: _Optional[_Union[_common_pb2.ExpansionKind, str]] = ..., mean_metrics: _Optional[_Union[RetrievalMetrics, _Mapping]] = ..., mean_judge: _Optional[_Union[JudgeScores, _Mapping]] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., questions_done: _Optional[int] = ..., config_id: _Optional[str] = ..., chunk_count: _Optional[int] = ..., processing_seconds: _Optional[float] = ..., processing_phases: _Optional[_Union[_common_pb2.ProcessingPhases, _Mapping]] = ..., index_reused: _Optional[bool] = ..., error: _Optional[str] = ..., questions_total: _Optional[int] = ..., questions_failed: _Optional[int] = ..., question_error: _Optional[str] = ..., characters_processed: _Optional[int] = ..., asking_seconds: _Optional[float] = ..., per_document: _Optional[_Iterable[_Union[DocumentFigures, _Mapping]]] = ..., per_collection: _Optional[_Iterable[_Union[DocumentFigures, _Mapping]]] = ..., trial: _Optional[_Union[StudyTrial, _Mapping]] = ...) -> None: ...

class DocumentFigures(_message.Message):
    __slots__ = ("document_id", "document_name", "collection", "metrics")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    document_name: str
    collection: str
    metrics: RetrievalMetrics
    def __init__(self, document_id: _Optional[str] = ..., document_name: _Optional[str] = ..., collection: _Optional[str] = ..., metrics: _Optional[_Union[RetrievalMetrics, _Mapping]] = ...) -> None: ...

class KnobGrid(_message.Message):
    __slots__ = ("knob", "values")
    KNOB_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    knob: str
    values: _containers.RepeatedCompositeFieldContainer[_common_pb2.KnobValue]
    def __init__(self, knob: _Optional[str] = ..., values: _Optional[_Iterable[_Union[_common_pb2.KnobValue, _Mapping]]] = ...) -> None: ...

class StrategyGrid(_message.Message):
    __slots__ = ("strategy", "grid")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    GRID_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    grid: _containers.RepeatedCompositeFieldContainer[KnobGrid]
    def __init__(self, strategy: _Optional[str] = ..., grid: _Optional[_Iterable[_Union[KnobGrid, _Mapping]]] = ...) -> None: ...

class ExperimentConfig(_message.Message):
    __slots__ = ("name", "question_set_id", "strategies", "retrieval", "answer_model", "judge_model", "retrieval_only", "validation", "study")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUESTION_SET_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_ONLY_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    STUDY_FIELD_NUMBER: _ClassVar[int]
    name: str
    question_set_id: str
    strategies: _containers.RepeatedCompositeFieldContainer[StrategyGrid]
    retrieval: _common_pb2.RetrievalOptions
    answer_model: ModelEndpoint
    judge_model: ModelEndpoint
    retrieval_only: bool
    validation: Validation
    study: Study
    def __init__(self, name: _Optional[str] = ..., question_set_id: _Optional[str] = ..., strategies: _Optional[_Iterable[_Union[StrategyGrid, _Mapping]]] = ..., retrieval: _Optional[_Union[_common_pb2.RetrievalOptions, _Mapping]] = ..., answer_model: _Optional[_Union[ModelEndpoint, _Mapping]] = ..., judge_model: _Optional[_Union[ModelEndpoint, _Mapping]] = ..., retrieval_only: _Optional[bool] = ..., validation: _Optional[_Union[Validation, _Mapping]] = ..., study: _Optional[_Union[Study, _Mapping]] = ...) -> None: ...

class StudyObjective(_message.Message):
    __slots__ = ("kind", "max_tokens", "min_recall")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MIN_RECALL_FIELD_NUMBER: _ClassVar[int]
    kind: StudyObjectiveKind
    max_tokens: int
    min_recall: float
    def __init__(self, kind: _Optional[_Union[StudyObjectiveKind, str]] = ..., max_tokens: _Optional[int] = ..., min_recall: _Optional[float] = ...) -> None: ...

class StudyBudget(_message.Message):
    __slots__ = ("seconds", "trials")
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    seconds: float
    trials: int
    def __init__(self, seconds: _Optional[float] = ..., trials: _Optional[int] = ...) -> None: ...

class StudySpace(_message.Message):
    __slots__ = ("strategies", "top_k", "hybrid", "neighbors", "rerank", "fusion_k")
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    HYBRID_FIELD_NUMBER: _ClassVar[int]
    NEIGHBORS_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    FUSION_K_FIELD_NUMBER: _ClassVar[int]
    strategies: _containers.RepeatedScalarFieldContainer[str]
    top_k: _containers.RepeatedScalarFieldContainer[int]
    hybrid: _containers.RepeatedScalarFieldContainer[bool]
    neighbors: _containers.RepeatedScalarFieldContainer[int]
    rerank: bool
    fusion_k: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, strategies: _Optional[_Iterable[str]] = ..., top_k: _Optional[_Iterable[int]] = ..., hybrid: _Optional[_Iterable[bool]] = ..., neighbors: _Optional[_Iterable[int]] = ..., rerank: _Optional[bool] = ..., fusion_k: _Optional[_Iterable[int]] = ...) -> None: ...

class Study(_message.Message):
    __slots__ = ("objective", "budget", "space", "seed")
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    objective: StudyObjective
    budget: StudyBudget
    space: StudySpace
    seed: int
    def __init__(self, objective: _Optional[_Union[StudyObjective, _Mapping]] = ..., budget: _Optional[_Union[StudyBudget, _Mapping]] = ..., space: _Optional[_Union[StudySpace, _Mapping]] = ..., seed: _Optional[int] = ...) -> None: ...

class StudyTrial(_message.Message):
    __slots__ = ("number", "origin", "state", "questions", "recall", "iou", "tokens_sent", "feasible", "pareto", "seconds", "params", "error")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    RECALL_FIELD_NUMBER: _ClassVar[int]
    IOU_FIELD_NUMBER: _ClassVar[int]
    TOKENS_SENT_FIELD_NUMBER: _ClassVar[int]
    FEASIBLE_FIELD_NUMBER: _ClassVar[int]
    PARETO_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    number: int
    origin: str
    state: str
    questions: int
    recall: float
    iou: float
    tokens_sent: float
    feasible: bool
    pareto: bool
    seconds: float
    params: str
    error: str
    def __init__(self, number: _Optional[int] = ..., origin: _Optional[str] = ..., state: _Optional[str] = ..., questions: _Optional[int] = ..., recall: _Optional[float] = ..., iou: _Optional[float] = ..., tokens_sent: _Optional[float] = ..., feasible: _Optional[bool] = ..., pareto: _Optional[bool] = ..., seconds: _Optional[float] = ..., params: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class StudyCandidate(_message.Message):
    __slots__ = ("role", "run_key", "means", "feasible")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    MEANS_FIELD_NUMBER: _ClassVar[int]
    FEASIBLE_FIELD_NUMBER: _ClassVar[int]
    role: str
    run_key: str
    means: _containers.RepeatedCompositeFieldContainer[MeanInterval]
    feasible: bool
    def __init__(self, role: _Optional[str] = ..., run_key: _Optional[str] = ..., means: _Optional[_Iterable[_Union[MeanInterval, _Mapping]]] = ..., feasible: _Optional[bool] = ...) -> None: ...

class StudyResult(_message.Message):
    __slots__ = ("trials_done", "trials_pruned", "trials_failed", "seconds_used", "best_run_key", "confirmation", "selection_questions", "confirmation_questions", "deciding_metric", "lead", "lead_ci_low", "lead_ci_high", "tie", "summary", "notes", "pareto_run_keys", "finished")
    TRIALS_DONE_FIELD_NUMBER: _ClassVar[int]
    TRIALS_PRUNED_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FAILED_FIELD_NUMBER: _ClassVar[int]
    SECONDS_USED_FIELD_NUMBER: _ClassVar[int]
    BEST_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    SELECTION_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    DECIDING_METRIC_FIELD_NUMBER: _ClassVar[int]
    LEAD_FIELD_NUMBER: _ClassVar[int]
    LEAD_CI_LOW_FIELD_NUMBER: _ClassVar[int]
    LEAD_CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PARETO_RUN_KEYS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    trials_done: int
    trials_pruned: int
    trials_failed: int
    seconds_used: float
    best_run_key: str
    confirmation: _containers.RepeatedCompositeFieldContainer[StudyCandidate]
    selection_questions: int
    confirmation_questions: int
    deciding_metric: str
    lead: float
    lead_ci_low: float
    lead_ci_high: float
    tie: bool
    summary: str
    notes: _containers.RepeatedScalarFieldContainer[str]
    pareto_run_keys: _containers.RepeatedScalarFieldContainer[str]
    finished: bool
    def __init__(self, trials_done: _Optional[int] = ..., trials_pruned: _Optional[int] = ..., trials_failed: _Optional[int] = ..., seconds_used: _Optional[float] = ..., best_run_key: _Optional[str] = ..., confirmation: _Optional[_Iterable[_Union[StudyCandidate, _Mapping]]] = ..., selection_questions: _Optional[int] = ..., confirmation_questions: _Optional[int] = ..., deciding_metric: _Optional[str] = ..., lead: _Optional[float] = ..., lead_ci_low: _Optional[float] = ..., lead_ci_high: _Optional[float] = ..., tie: _Optional[bool] = ..., summary: _Optional[str] = ..., notes: _Optional[_Iterable[str]] = ..., pareto_run_keys: _Optional[_Iterable[str]] = ..., finished: _Optional[bool] = ...) -> None: ...

class StudyProgress(_message.Message):
    __slots__ = ("trials_done", "trials_budget", "seconds_used", "seconds_budget", "best_run_key", "best_recall", "best_iou", "best_tokens_sent", "trial", "trial_run_key", "phase")
    TRIALS_DONE_FIELD_NUMBER: _ClassVar[int]
    TRIALS_BUDGET_FIELD_NUMBER: _ClassVar[int]
    SECONDS_USED_FIELD_NUMBER: _ClassVar[int]
    SECONDS_BUDGET_FIELD_NUMBER: _ClassVar[int]
    BEST_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    BEST_RECALL_FIELD_NUMBER: _ClassVar[int]
    BEST_IOU_FIELD_NUMBER: _ClassVar[int]
    BEST_TOKENS_SENT_FIELD_NUMBER: _ClassVar[int]
    TRIAL_FIELD_NUMBER: _ClassVar[int]
    TRIAL_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    trials_done: int
    trials_budget: int
    seconds_used: float
    seconds_budget: float
    best_run_key: str
    best_recall: float
    best_iou: float
    best_tokens_sent: float
    trial: StudyTrial
    trial_run_key: str
    phase: str
    def __init__(self, trials_done: _Optional[int] = ..., trials_budget: _Optional[int] = ..., seconds_used: _Optional[float] = ..., seconds_budget: _Optional[float] = ..., best_run_key: _Optional[str] = ..., best_recall: _Optional[float] = ..., best_iou: _Optional[float] = ..., best_tokens_sent: _Optional[float] = ..., trial: _Optional[_Union[StudyTrial, _Mapping]] = ..., trial_run_key: _Optional[str] = ..., phase: _Optional[str] = ...) -> None: ...

class Validation(_message.Message):
    __slots__ = ("mode", "seed", "selection_share", "folds", "metric")
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SELECTION_SHARE_FIELD_NUMBER: _ClassVar[int]
    FOLDS_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    mode: ValidationMode
    seed: int
    selection_share: float
    folds: int
    metric: str
    def __init__(self, mode: _Optional[_Union[ValidationMode, str]] = ..., seed: _Optional[int] = ..., selection_share: _Optional[float] = ..., folds: _Optional[int] = ..., metric: _Optional[str] = ...) -> None: ...

class ValidatedScore(_message.Message):
    __slots__ = ("metric", "selection_mean", "confirmation_mean", "ci_low", "ci_high", "all_mean")
    METRIC_FIELD_NUMBER: _ClassVar[int]
    SELECTION_MEAN_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_MEAN_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    ALL_MEAN_FIELD_NUMBER: _ClassVar[int]
    metric: str
    selection_mean: float
    confirmation_mean: float
    ci_low: float
    ci_high: float
    all_mean: float
    def __init__(self, metric: _Optional[str] = ..., selection_mean: _Optional[float] = ..., confirmation_mean: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., all_mean: _Optional[float] = ...) -> None: ...

class WinnerValidation(_message.Message):
    __slots__ = ("mode", "seed", "metric", "selection_questions", "confirmation_questions", "winner_run_key", "all_questions_winner_run_key", "scores", "fold_winners", "unavailable", "selection_question_ids", "leaders")
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    SELECTION_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    WINNER_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    ALL_QUESTIONS_WINNER_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    FOLD_WINNERS_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    SELECTION_QUESTION_IDS_FIELD_NUMBER: _ClassVar[int]
    LEADERS_FIELD_NUMBER: _ClassVar[int]
    mode: ValidationMode
    seed: int
    metric: str
    selection_questions: int
    confirmation_questions: int
    winner_run_key: str
    all_questions_winner_run_key: str
    scores: _containers.RepeatedCompositeFieldContainer[ValidatedScore]
    fold_winners: _containers.RepeatedScalarFieldContainer[str]
    unavailable: str
    selection_question_ids: _containers.RepeatedScalarFieldContainer[str]
    leaders: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, mode: _Optional[_Union[ValidationMode, str]] = ..., seed: _Optional[int] = ..., metric: _Optional[str] = ..., selection_questions: _Optional[int] = ..., confirmation_questions: _Optional[int] = ..., winner_run_key: _Optional[str] = ..., all_questions_winner_run_key: _Optional[str] = ..., scores: _Optional[_Iterable[_Union[ValidatedScore, _Mapping]]] = ..., fold_winners: _Optional[_Iterable[str]] = ..., unavailable: _Optional[str] = ..., selection_question_ids: _Optional[_Iterable[str]] = ..., leaders: _Optional[_Iterable[str]] = ...) -> None: ...

class MeanInterval(_message.Message):
    __slots__ = ("run_key", "metric", "mean", "ci_low", "ci_high", "questions")
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    run_key: str
    metric: str
    mean: float
    ci_low: float
    ci_high: float
    questions: int
    def __init__(self, run_key: _Optional[str] = ..., metric: _Optional[str] = ..., mean: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., questions: _Optional[int] = ...) -> None: ...

class PairwiseWins(_message.Message):
    __slots__ = ("metric", "run_key", "other_run_key", "wins", "losses", "ties", "experiment_id", "other_experiment_id")
    METRIC_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    OTHER_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    LOSSES_FIELD_NUMBER: _ClassVar[int]
    TIES_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OTHER_EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    metric: str
    run_key: str
    other_run_key: str
    wins: int
    losses: int
    ties: int
    experiment_id: str
    other_experiment_id: str
    def __init__(self, metric: _Optional[str] = ..., run_key: _Optional[str] = ..., other_run_key: _Optional[str] = ..., wins: _Optional[int] = ..., losses: _Optional[int] = ..., ties: _Optional[int] = ..., experiment_id: _Optional[str] = ..., other_experiment_id: _Optional[str] = ...) -> None: ...

class DominatedRun(_message.Message):
    __slots__ = ("run_key", "by_run_key", "better_on")
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    BY_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    BETTER_ON_FIELD_NUMBER: _ClassVar[int]
    run_key: str
    by_run_key: str
    better_on: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, run_key: _Optional[str] = ..., by_run_key: _Optional[str] = ..., better_on: _Optional[_Iterable[str]] = ...) -> None: ...

class Verdict(_message.Message):
    __slots__ = ("metric", "winner_run_key", "best_run_key", "runner_up_run_key", "difference", "ci_low", "ci_high", "shared_questions", "means", "pairs", "unavailable", "leaders", "dominated")
    METRIC_FIELD_NUMBER: _ClassVar[int]
    WINNER_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    BEST_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    RUNNER_UP_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCE_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    SHARED_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    MEANS_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    LEADERS_FIELD_NUMBER: _ClassVar[int]
    DOMINATED_FIELD_NUMBER: _ClassVar[int]
    metric: str
    winner_run_key: str
    best_run_key: str
    runner_up_run_key: str
    difference: float
    ci_low: float
    ci_high: float
    shared_questions: int
    means: _containers.RepeatedCompositeFieldContainer[MeanInterval]
    pairs: _containers.RepeatedCompositeFieldContainer[PairwiseWins]
    unavailable: str
    leaders: _containers.RepeatedScalarFieldContainer[str]
    dominated: _containers.RepeatedCompositeFieldContainer[DominatedRun]
    def __init__(self, metric: _Optional[str] = ..., winner_run_key: _Optional[str] = ..., best_run_key: _Optional[str] = ..., runner_up_run_key: _Optional[str] = ..., difference: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., shared_questions: _Optional[int] = ..., means: _Optional[_Iterable[_Union[MeanInterval, _Mapping]]] = ..., pairs: _Optional[_Iterable[_Union[PairwiseWins, _Mapping]]] = ..., unavailable: _Optional[str] = ..., leaders: _Optional[_Iterable[str]] = ..., dominated: _Optional[_Iterable[_Union[DominatedRun, _Mapping]]] = ...) -> None: ...

class ExperimentProvenance(_message.Message):
    __slots__ = ("question_set_hash", "embedding_model", "answer_model", "judge_model", "judge_prompt_version", "code_version", "document_hashes", "extractive_method", "document_names", "document_collections")
    class DocumentHashesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class DocumentNamesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class DocumentCollectionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    QUESTION_SET_HASH_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_PROMPT_VERSION_FIELD_NUMBER: _ClassVar[int]
    CODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_HASHES_FIELD_NUMBER: _ClassVar[int]
    EXTRACTIVE_METHOD_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAMES_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    question_set_hash: str
    embedding_model: str
    answer_model: str
    judge_model: str
    judge_prompt_version: str
    code_version: str
    document_hashes: _containers.ScalarMap[str, str]
    extractive_method: str
    document_names: _containers.ScalarMap[str, str]
    document_collections: _containers.ScalarMap[str, str]
    def __init__(self, question_set_hash: _Optional[str] = ..., embedding_model: _Optional[str] = ..., answer_model: _Optional[str] = ..., judge_model: _Optional[str] = ..., judge_prompt_version: _Optional[str] = ..., code_version: _Optional[str] = ..., document_hashes: _Optional[_Mapping[str, str]] = ..., extractive_method: _Optional[str] = ..., document_names: _Optional[_Mapping[str, str]] = ..., document_collections: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Experiment(_message.Message):
    __slots__ = ("experiment_id", "config", "state", "question_set_hash", "created_at", "finished_at", "runs", "results", "error", "provenance", "questions_done", "questions_total", "validation", "verdict", "progress", "study")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    QUESTION_SET_HASH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_DONE_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    STUDY_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    config: ExperimentConfig
    state: ExperimentState
    question_set_hash: str
    created_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    runs: _containers.RepeatedCompositeFieldContainer[ExperimentRun]
    results: _containers.RepeatedCompositeFieldContainer[QuestionResult]
    error: str
    provenance: ExperimentProvenance
    questions_done: int
    questions_total: int
    validation: WinnerValidation
    verdict: Verdict
    progress: ExperimentProgress
    study: StudyResult
    def __init__(self, experiment_id: _Optional[str] = ..., config: _Optional[_Union[ExperimentConfig, _Mapping]] = ..., state: _Optional[_Union[ExperimentState, str]] = ..., question_set_hash: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., runs: _Optional[_Iterable[_Union[ExperimentRun, _Mapping]]] = ..., results: _Optional[_Iterable[_Union[QuestionResult, _Mapping]]] = ..., error: _Optional[str] = ..., provenance: _Optional[_Union[ExperimentProvenance, _Mapping]] = ..., questions_done: _Optional[int] = ..., questions_total: _Optional[int] = ..., validation: _Optional[_Union[WinnerValidation, _Mapping]] = ..., verdict: _Optional[_Union[Verdict, _Mapping]] = ..., progress: _Optional[_Union[ExperimentProgress, _Mapping]] = ..., study: _Optional[_Union[StudyResult, _Mapping]] = ...) -> None: ...

class RunExperimentRequest(_message.Message):
    __slots__ = ("config", "dry_run", "resume_experiment_id")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    RESUME_EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    config: ExperimentConfig
    dry_run: bool
    resume_experiment_id: str
    def __init__(self, config: _Optional[_Union[ExperimentConfig, _Mapping]] = ..., dry_run: _Optional[bool] = ..., resume_experiment_id: _Optional[str] = ...) -> None: ...

class ExperimentEstimate(_message.Message):
    __slots__ = ("questions", "runs", "llm_calls", "prompt_tokens", "estimated_cost_usd", "completion_tokens", "notes", "documents", "estimated_seconds", "warnings", "index_sets_to_process", "index_sets_reused", "processing_seconds", "questions_seconds")
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    INDEX_SETS_TO_PROCESS_FIELD_NUMBER: _ClassVar[int]
    INDEX_SETS_REUSED_FIELD_NUMBER: _ClassVar[int]
    PROCESSING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_SECONDS_FIELD_NUMBER: _ClassVar[int]
    questions: int
    runs: int
    llm_calls: int
    prompt_tokens: int
    estimated_cost_usd: float
    completion_tokens: int
    notes: _containers.RepeatedScalarFieldContainer[str]
    documents: int
    estimated_seconds: float
    warnings: _containers.RepeatedScalarFieldContainer[str]
    index_sets_to_process: int
    index_sets_reused: int
    processing_seconds: float
    questions_seconds: float
    def __init__(self, questions: _Optional[int] = ..., runs: _Optional[int] = ..., llm_calls: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., estimated_cost_usd: _Optional[float] = ..., completion_tokens: _Optional[int] = ..., notes: _Optional[_Iterable[str]] = ..., documents: _Optional[int] = ..., estimated_seconds: _Optional[float] = ..., warnings: _Optional[_Iterable[str]] = ..., index_sets_to_process: _Optional[int] = ..., index_sets_reused: _Optional[int] = ..., processing_seconds: _Optional[float] = ..., questions_seconds: _Optional[float] = ...) -> None: ...

class ExperimentProgress(_message.Message):
    __slots__ = ("experiment_id", "questions_done", "questions_total", "message", "run_key", "document_name", "documents_done", "documents_total", "study")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_DONE_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_NAME_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_DONE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    STUDY_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    questions_done: int
    questions_total: int
    message: str
    run_key: str
    document_name: str
    documents_done: int
    documents_total: int
    study: StudyProgress
    def __init__(self, experiment_id: _Optional[str] = ..., questions_done: _Optional[int] = ..., questions_total: _Optional[int] = ..., message: _Optional[str] = ..., run_key: _Optional[str] = ..., document_name: _Optional[str] = ..., documents_done: _Optional[int] = ..., documents_total: _Optional[int] = ..., study: _Optional[_Union[StudyProgress, _Mapping]] = ...) -> None: ...

class ExperimentEvent(_message.Message):
    __slots__ = ("progress", "estimate", "experiment")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENT_FIELD_NUMBER: _ClassVar[int]
    progress: ExperimentProgress
    estimate: ExperimentEstimate
    experiment: Experiment
    def __init__(self, progress: _Optional[_Union[ExperimentProgress, _Mapping]] = ..., estimate: _Optional[_Union[ExperimentEstimate, _Mapping]] = ..., experiment: _Optional[_Union[Experiment, _Mapping]] = ...) -> None: ...

class CancelExperimentRequest(_message.Message):
    __slots__ = ("experiment_id",)
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    def __init__(self, experiment_id: _Optional[str] = ...) -> None: ...

class CancelExperimentResponse(_message.Message):
    __slots__ = ("experiment_id", "state")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    state: ExperimentState
    def __init__(self, experiment_id: _Optional[str] = ..., state: _Optional[_Union[ExperimentState, str]] = ...) -> None: ...

class GetExperimentRequest(_message.Message):
    __slots__ = ("experiment_id", "without_results", "run_key")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    WITHOUT_RESULTS_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    without_results: bool
    run_key: str
    def __init__(self, experiment_id: _Optional[str] = ..., without_results: _Optional[bool] = ..., run_key: _Optional[str] = ...) -> None: ...

class ListExperimentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListExperimentsResponse(_message.Message):
    __slots__ = ("experiments", "next_page_token")
    EXPERIMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    experiments: _containers.RepeatedCompositeFieldContainer[Experiment]
    next_page_token: str
    def __init__(self, experiments: _Optional[_Iterable[_Union[Experiment, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CompareExperimentsRequest(_message.Message):
    __slots__ = ("experiment_ids", "bootstrap_samples")
    EXPERIMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    BOOTSTRAP_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    experiment_ids: _containers.RepeatedScalarFieldContainer[str]
    bootstrap_samples: int
    def __init__(self, experiment_ids: _Optional[_Iterable[str]] = ..., bootstrap_samples: _Optional[int] = ...) -> None: ...

class MetricDifference(_message.Message):
    __slots__ = ("metric", "baseline_run_key", "run_key", "difference", "ci_low", "ci_high", "shared_questions", "baseline_experiment_id", "experiment_id", "baseline_mean", "mean")
    METRIC_FIELD_NUMBER: _ClassVar[int]
    BASELINE_RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    RUN_KEY_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCE_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    SHARED_QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    BASELINE_EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    BASELINE_MEAN_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    metric: str
    baseline_run_key: str
    run_key: str
    difference: float
    ci_low: float
    ci_high: float
    shared_questions: int
    baseline_experiment_id: str
    experiment_id: str
    baseline_mean: float
    mean: float
    def __init__(self, metric: _Optional[str] = ..., baseline_run_key: _Optional[str] = ..., run_key: _Optional[str] = ..., difference: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., shared_questions: _Optional[int] = ..., baseline_experiment_id: _Optional[str] = ..., experiment_id: _Optional[str] = ..., baseline_mean: _Optional[float] = ..., mean: _Optional[float] = ...) -> None: ...

class CompareExperimentsResponse(_message.Message):
    __slots__ = ("experiments", "warnings", "differences", "wins")
    EXPERIMENTS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    experiments: _containers.RepeatedCompositeFieldContainer[Experiment]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    differences: _containers.RepeatedCompositeFieldContainer[MetricDifference]
    wins: _containers.RepeatedCompositeFieldContainer[PairwiseWins]
    def __init__(self, experiments: _Optional[_Iterable[_Union[Experiment, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., differences: _Optional[_Iterable[_Union[MetricDifference, _Mapping]]] = ..., wins: _Optional[_Iterable[_Union[PairwiseWins, _Mapping]]] = ...) -> None: ...

class GetReportRequest(_message.Message):
    __slots__ = ("experiment_id", "view")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    view: ReportView
    def __init__(self, experiment_id: _Optional[str] = ..., view: _Optional[_Union[ReportView, str]] = ...) -> None: ...

class Report(_message.Message):
    __slots__ = ("experiment_id", "file_name", "content_type", "view")
    EXPERIMENT_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    experiment_id: str
    file_name: str
    content_type: str
    view: ReportView
    def __init__(self, experiment_id: _Optional[str] = ..., file_name: _Optional[str] = ..., content_type: _Optional[str] = ..., view: _Optional[_Union[ReportView, str]] = ...) -> None: ...

class ReportPiece(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: Report
    data: bytes
    def __init__(self, header: _Optional[_Union[Report, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SubmitFeedbackRequest(_message.Message):
    __slots__ = ("query_id", "thumbs_up", "comment")
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    THUMBS_UP_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    query_id: str
    thumbs_up: bool
    comment: str
    def __init__(self, query_id: _Optional[str] = ..., thumbs_up: _Optional[bool] = ..., comment: _Optional[str] = ...) -> None: ...

class Feedback(_message.Message):
    __slots__ = ("feedback_id", "query_id", "thumbs_up", "comment", "strategy", "created_at", "question", "answer", "retrieved_chunks")
    FEEDBACK_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_ID_FIELD_NUMBER: _ClassVar[int]
    THUMBS_UP_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    feedback_id: str
    query_id: str
    thumbs_up: bool
    comment: str
    strategy: str
    created_at: _timestamp_pb2.Timestamp
    question: str
    answer: str
    retrieved_chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.RetrievedChunk]
    def __init__(self, feedback_id: _Optional[str] = ..., query_id: _Optional[str] = ..., thumbs_up: _Optional[bool] = ..., comment: _Optional[str] = ..., strategy: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., question: _Optional[str] = ..., answer: _Optional[str] = ..., retrieved_chunks: _Optional[_Iterable[_Union[_common_pb2.RetrievedChunk, _Mapping]]] = ...) -> None: ...

class SummarizeFeedbackRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FeedbackSummary(_message.Message):
    __slots__ = ("strategy", "thumbs_up", "thumbs_down")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    THUMBS_UP_FIELD_NUMBER: _ClassVar[int]
    THUMBS_DOWN_FIELD_NUMBER: _ClassVar[int]
    strategy: str
    thumbs_up: int
    thumbs_down: int
    def __init__(self, strategy: _Optional[str] = ..., thumbs_up: _Optional[int] = ..., thumbs_down: _Optional[int] = ...) -> None: ...

class SummarizeFeedbackResponse(_message.Message):
    __slots__ = ("strategies",)
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    strategies: _containers.RepeatedCompositeFieldContainer[FeedbackSummary]
    def __init__(self, strategies: _Optional[_Iterable[_Union[FeedbackSummary, _Mapping]]] = ...) -> None: ...

class MetricInfo(_message.Message):
    __slots__ = ("name", "label", "description", "unit", "higher_is_better", "group")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    HIGHER_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    name: str
    label: str
    description: str
    unit: MetricUnit
    higher_is_better: bool
    group: str
    def __init__(self, name: _Optional[str] = ..., label: _Optional[str] = ..., description: _Optional[str] = ..., unit: _Optional[_Union[MetricUnit, str]] = ..., higher_is_better: _Optional[bool] = ..., group: _Optional[str] = ...) -> None: ...

class ListMetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetEvaluatorLimitsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EvaluatorLimits(_message.Message):
    __slots__ = ("max_question_count",)
    MAX_QUESTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    max_question_count: int
    def __init__(self, max_question_count: _Optional[int] = ...) -> None: ...

class ListMetricsResponse(_message.Message):
    __slots__ = ("metrics",)
    METRICS_FIELD_NUMBER: _ClassVar[int]
    metrics: _containers.RepeatedCompositeFieldContainer[MetricInfo]
    def __init__(self, metrics: _Optional[_Iterable[_Union[MetricInfo, _Mapping]]] = ...) -> None: ...
