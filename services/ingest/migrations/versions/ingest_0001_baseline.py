"""Baseline of the ingest schema (one row per document with its canonical text and its parse): the
tables the release before migrations made with create_all, frozen here (chunklab/db/migrations.py).

Revision ID: ingest_0001
"""

import sqlalchemy as sa

from chunklab.db.migrations import create_missing

revision = "ingest_0001"
down_revision = None

BASELINE = sa.MetaData()
sa.Table(
    "documents",
    BASELINE,
    sa.Column("document_id", sa.String(length=36), nullable=False),
    sa.Column("name", sa.String(length=512), nullable=False),
    sa.Column("format", sa.Integer(), nullable=False),
    sa.Column("collection", sa.String(length=128), nullable=False),
    sa.Column("language", sa.String(length=16), nullable=False),
    sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("size_bytes", sa.Integer(), nullable=False),
    sa.Column("content_hash", sa.String(length=64), nullable=False),
    sa.Column("character_count", sa.Integer(), nullable=False),
    sa.Column("extra", sa.JSON(), nullable=False),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("tree", sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint("document_id"),
    sa.UniqueConstraint("collection", "content_hash", name="uq_collection_hash"),
    sa.Index("ix_documents_collection", "collection"),
    sa.Index("ix_documents_ingested_at", "ingested_at"),
    sa.Index("ix_documents_language", "language"),
)


def upgrade() -> None:
    create_missing(BASELINE)
