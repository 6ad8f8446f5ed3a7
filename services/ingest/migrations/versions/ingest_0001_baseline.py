"""Baseline: the ingest schema as the release before migrations made it with
create_all (one row per document with its canonical text and its parse).

Frozen here, not read from services/ingest/store.py, which moves on with later
revisions. Tables that exist are kept as they are (a database of the previous
release has them all, an older one some), the missing ones are created.

Revision ID: ingest_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "ingest_0001"
down_revision = None
branch_labels = None
depends_on = None

BASELINE = sa.MetaData()
sa.Table(
    "documents", BASELINE,
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
    BASELINE.create_all(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    BASELINE.drop_all(op.get_bind())
