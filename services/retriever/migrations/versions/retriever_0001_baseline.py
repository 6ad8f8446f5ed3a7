"""Baseline of the retriever schema (vector indexes, index set records with their BM25 statistics,
freshness windows): the tables the release before migrations made with create_all, frozen here
(chunklab/db/migrations.py).

Revision ID: retriever_0001
"""

import sqlalchemy as sa

from chunklab.db.migrations import create_missing

revision = "retriever_0001"
down_revision = None

BASELINE = sa.MetaData()
sa.Table(
    "retriever_freshness_windows",
    BASELINE,
    sa.Column("collection", sa.String(length=128), nullable=False),
    sa.Column("max_age_days", sa.Integer(), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("collection"),
)
sa.Table(
    "retriever_index_sets",
    BASELINE,
    sa.Column("embedding_model", sa.String(length=256), nullable=False),
    sa.Column("document_id", sa.String(length=128), nullable=False),
    sa.Column("strategy", sa.String(length=128), nullable=False),
    sa.Column("config_id", sa.String(length=64), nullable=False),
    sa.Column("dimension", sa.Integer(), nullable=False),
    sa.Column("spec", sa.JSON(), nullable=False),
    sa.Column("expansion", sa.Integer(), nullable=False),
    sa.Column("document_name", sa.String(length=512), nullable=False),
    sa.Column("collection", sa.String(length=128), nullable=False),
    sa.Column("published_ts", sa.Float(), nullable=False),
    sa.Column("points", sa.Integer(), nullable=False),
    sa.Column("bytes", sa.Integer(), nullable=False),
    sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("active", sa.Boolean(), nullable=False),
    sa.Column("pinned", sa.Boolean(), nullable=False),
    sa.Column("archived", sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint("embedding_model", "document_id", "strategy", "config_id"),
    sa.Index("ix_retriever_index_sets_archived", "archived"),
    sa.Index("ix_retriever_index_sets_last_used_at", "last_used_at"),
)
sa.Table(
    "retriever_set_terms",
    BASELINE,
    sa.Column("embedding_model", sa.String(length=256), nullable=False),
    sa.Column("document_id", sa.String(length=128), nullable=False),
    sa.Column("strategy", sa.String(length=128), nullable=False),
    sa.Column("config_id", sa.String(length=64), nullable=False),
    sa.Column("language", sa.String(length=16), nullable=False),
    sa.Column("chunks", sa.Integer(), nullable=False),
    sa.Column("counts", sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint("embedding_model", "document_id", "strategy", "config_id"),
)
sa.Table(
    "retriever_vector_indexes",
    BASELINE,
    sa.Column("name", sa.String(length=300), nullable=False),
    sa.Column("embedding_model", sa.String(length=256), nullable=False),
    sa.Column("dimension", sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
    sa.Index("ix_retriever_vector_indexes_embedding_model", "embedding_model"),
)


def upgrade() -> None:
    create_missing(BASELINE)
