"""The evaluator's tables: question sets (with their provenance), generations
with one row per finished passage, experiments with one row per finished
question, answered queries and their feedback.

Rich records (configs, results with their chunks and expansion trees) are
stored as serialized protobuf messages: they are read back whole, never
queried by their insides, and the contract already versions their shape.
API keys are never stored (the config is stripped of them before it lands).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, synonym


class Base(DeclarativeBase):
    pass


class QuestionSetRow(Base):
    __tablename__ = "question_sets"

    question_set_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(512))
    description: Mapped[str] = mapped_column(Text, default="")
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    question_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class QuestionRow(Base):
    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("question_set_id", "position", name="uq_set_position"),)

    question_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    question_set_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("question_sets.question_set_id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    # A serialized evaluator_pb2.Question.
    message: Mapped[bytes] = mapped_column(LargeBinary)


class QuestionSetProvenanceRow(Base):
    """How a set was made (a table of its own, added by migration evaluator_0002.."""

    __tablename__ = "question_set_provenance"

    question_set_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("question_sets.question_set_id", ondelete="CASCADE"), primary_key=True
    )
    # A serialized evaluator_pb2.QuestionSetProvenance.
    message: Mapped[bytes] = mapped_column(LargeBinary)


class GenerationRow(Base):
    __tablename__ = "generations"

    generation_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    state: Mapped[int] = mapped_column(Integer, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    # A serialized evaluator_pb2.Generation without its outcomes (its request without the key).
    message: Mapped[bytes] = mapped_column(LargeBinary)


class PassageOutcomeRow(Base):
    """One passage of a generation, saved the moment it is done: a resume skips it."""

    __tablename__ = "generation_outcomes"
    __table_args__ = (UniqueConstraint("generation_id", "passage_number", name="uq_generation_passage"),)

    outcome_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    generation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("generations.generation_id", ondelete="CASCADE"), index=True
    )
    passage_number: Mapped[int] = mapped_column(Integer)
    # A serialized evaluator_pb2.PassageOutcome.
    message: Mapped[bytes] = mapped_column(LargeBinary)


class ExperimentRow(Base):
    __tablename__ = "experiments"

    experiment_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(512))
    question_set_id: Mapped[str] = mapped_column(String(36), index=True)
    state: Mapped[int] = mapped_column(Integer, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    error: Mapped[str] = mapped_column(Text, default="")
    # A serialized evaluator_pb2.Experiment without results (config without
    # keys, planned runs with their per-run facts, provenance).
    message: Mapped[bytes] = mapped_column(LargeBinary)


class QuestionResultRow(Base):
    __tablename__ = "question_results"
    __table_args__ = (UniqueConstraint("experiment_id", "run_key", "question_id", name="uq_result"),)

    result_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    experiment_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("experiments.experiment_id", ondelete="CASCADE"), index=True
    )
    run_key: Mapped[str] = mapped_column(String(512))
    question_id: Mapped[str] = mapped_column(String(36))
    position: Mapped[int] = mapped_column(Integer)
    # A serialized evaluator_pb2.QuestionResult.
    message: Mapped[bytes] = mapped_column(LargeBinary)


class QueryRow(Base):
    """An answered query (Answer RPC), kept so that feedback can point at it."""

    __tablename__ = "queries"

    query_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    strategy: Mapped[str] = mapped_column(String(128), index=True)
    answer: Mapped[str] = mapped_column(Text)
    extractive: Mapped[bool] = mapped_column(Boolean)
    model: Mapped[str] = mapped_column(String(256))
    latency_ms: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    # Serialized evaluator_pb2.AnswerContext (chunks and expansion tree) and
    # RetrievalOptions.
    context: Mapped[bytes] = mapped_column(LargeBinary)
    settings: Mapped[bytes] = mapped_column(LargeBinary)


class FeedbackRow(Base):
    __tablename__ = "feedback"

    feedback_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    query_id: Mapped[str] = mapped_column(String(36), ForeignKey("queries.query_id", ondelete="CASCADE"), index=True)
    thumbs_up: Mapped[bool] = mapped_column(Boolean)
    comment: Mapped[str] = mapped_column(Text, default="")
    strategy: Mapped[str] = mapped_column(String(128), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class _LeaseColumns:
    """What every lease table holds beside its work's id (services/evaluator/leases.py)."""

    replica: Mapped[str] = mapped_column(String(256))
    # Seconds since the epoch, by the clock of the replica that last renewed it.
    expires_at: Mapped[float] = mapped_column(Float)
    # CancelExperiment reached another replica: the holder stops it at its next renewal.
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)


class ExperimentLeaseRow(_LeaseColumns, Base):
    """Which evaluator replica runs an experiment, until when (ADR 0065): a table
    of its own, added by migration evaluator_0002."""

    __tablename__ = "experiment_leases"

    experiment_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("experiments.experiment_id", ondelete="CASCADE"), primary_key=True
    )
    # What services/evaluator/leases.py calls the leased work's id, in every lease table.
    work_id = synonym("experiment_id")


class GenerationLeaseRow(_LeaseColumns, Base):
    """Which evaluator replica runs a question generation, until when (ADR 0153), added by
    migration evaluator_0003."""

    __tablename__ = "generation_leases"

    generation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("generations.generation_id", ondelete="CASCADE"), primary_key=True
    )
    work_id = synonym("generation_id")
