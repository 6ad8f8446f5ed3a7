"""Baseline of the evaluator schema (question sets, generations, experiments with their results,
answered queries and feedback): the tables the release before migrations made with create_all,
frozen here (chunklab/db/migrations.py).

Revision ID: evaluator_0001
"""

import sqlalchemy as sa

from chunklab.db.migrations import create_missing

revision = "evaluator_0001"
down_revision = None

BASELINE = sa.MetaData()
sa.Table(
    "experiments",
    BASELINE,
    sa.Column("experiment_id", sa.String(length=36), nullable=False),
    sa.Column("name", sa.String(length=512), nullable=False),
    sa.Column("question_set_id", sa.String(length=36), nullable=False),
    sa.Column("state", sa.Integer(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("error", sa.Text(), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint("experiment_id"),
    sa.Index("ix_experiments_created_at", "created_at"),
    sa.Index("ix_experiments_question_set_id", "question_set_id"),
    sa.Index("ix_experiments_state", "state"),
)
sa.Table(
    "generations",
    BASELINE,
    sa.Column("generation_id", sa.String(length=36), nullable=False),
    sa.Column("state", sa.Integer(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint("generation_id"),
    sa.Index("ix_generations_created_at", "created_at"),
    sa.Index("ix_generations_state", "state"),
)
sa.Table(
    "queries",
    BASELINE,
    sa.Column("query_id", sa.String(length=36), nullable=False),
    sa.Column("question", sa.Text(), nullable=False),
    sa.Column("strategy", sa.String(length=128), nullable=False),
    sa.Column("answer", sa.Text(), nullable=False),
    sa.Column("extractive", sa.Boolean(), nullable=False),
    sa.Column("model", sa.String(length=256), nullable=False),
    sa.Column("latency_ms", sa.Float(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("context", sa.LargeBinary(), nullable=False),
    sa.Column("settings", sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint("query_id"),
    sa.Index("ix_queries_created_at", "created_at"),
    sa.Index("ix_queries_strategy", "strategy"),
)
sa.Table(
    "question_sets",
    BASELINE,
    sa.Column("question_set_id", sa.String(length=36), nullable=False),
    sa.Column("name", sa.String(length=512), nullable=False),
    sa.Column("description", sa.Text(), nullable=False),
    sa.Column("content_hash", sa.String(length=64), nullable=False),
    sa.Column("question_count", sa.Integer(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("question_set_id"),
    sa.Index("ix_question_sets_content_hash", "content_hash"),
    sa.Index("ix_question_sets_created_at", "created_at"),
)
sa.Table(
    "feedback",
    BASELINE,
    sa.Column("feedback_id", sa.String(length=36), nullable=False),
    sa.Column("query_id", sa.String(length=36), nullable=False),
    sa.Column("thumbs_up", sa.Boolean(), nullable=False),
    sa.Column("comment", sa.Text(), nullable=False),
    sa.Column("strategy", sa.String(length=128), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["query_id"], ["queries.query_id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("feedback_id"),
    sa.Index("ix_feedback_created_at", "created_at"),
    sa.Index("ix_feedback_query_id", "query_id"),
    sa.Index("ix_feedback_strategy", "strategy"),
)
sa.Table(
    "generation_outcomes",
    BASELINE,
    sa.Column("outcome_id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("generation_id", sa.String(length=36), nullable=False),
    sa.Column("passage_number", sa.Integer(), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(["generation_id"], ["generations.generation_id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("outcome_id"),
    sa.UniqueConstraint("generation_id", "passage_number", name="uq_generation_passage"),
    sa.Index("ix_generation_outcomes_generation_id", "generation_id"),
)
sa.Table(
    "question_results",
    BASELINE,
    sa.Column("result_id", sa.Integer(), autoincrement=True, nullable=False),
    sa.Column("experiment_id", sa.String(length=36), nullable=False),
    sa.Column("run_key", sa.String(length=512), nullable=False),
    sa.Column("question_id", sa.String(length=36), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(["experiment_id"], ["experiments.experiment_id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("result_id"),
    sa.UniqueConstraint("experiment_id", "run_key", "question_id", name="uq_result"),
    sa.Index("ix_question_results_experiment_id", "experiment_id"),
)
sa.Table(
    "question_set_provenance",
    BASELINE,
    sa.Column("question_set_id", sa.String(length=36), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(["question_set_id"], ["question_sets.question_set_id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("question_set_id"),
)
sa.Table(
    "questions",
    BASELINE,
    sa.Column("question_id", sa.String(length=36), nullable=False),
    sa.Column("question_set_id", sa.String(length=36), nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("message", sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(["question_set_id"], ["question_sets.question_set_id"], ondelete="CASCADE"),
    sa.PrimaryKeyConstraint("question_id"),
    sa.UniqueConstraint("question_set_id", "position", name="uq_set_position"),
    sa.Index("ix_questions_question_set_id", "question_set_id"),
)


def upgrade() -> None:
    create_missing(BASELINE)
