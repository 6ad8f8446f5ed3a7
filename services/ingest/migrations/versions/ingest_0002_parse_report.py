"""Each document's parse report (issue 28, ADR 0104): a new column holding a serialized
ParseReport. The documents already stored get theirs from their stored tree (the counts) and
their metadata (a PDF's `tables_not_read` note becomes a warning and leaves the metadata), as a
document ingested now would; then the column is required.

Revision ID: ingest_0002
"""

import sqlalchemy as sa
from alembic import op

from services.ingest.report import report_of_stored

revision = "ingest_0002"
down_revision = "ingest_0001"

# Documents are read and written this many at a time: a tree can be large.
BATCH = 200

DOCUMENTS = sa.table(
    "documents",
    sa.column("document_id", sa.String),
    sa.column("format", sa.Integer),
    sa.column("extra", sa.JSON),
    sa.column("tree", sa.LargeBinary),
    sa.column("parse_report", sa.LargeBinary),
)


def upgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("parse_report", sa.LargeBinary(), nullable=True))
    backfill(op.get_bind())
    with op.batch_alter_table("documents") as batch:
        batch.alter_column("parse_report", existing_type=sa.LargeBinary(), nullable=False)


def backfill(connection: sa.Connection) -> None:
    """Every stored document's report, in batches of BATCH documents."""
    ids = list(connection.scalars(sa.select(DOCUMENTS.c.document_id).order_by(DOCUMENTS.c.document_id)))
    for first in range(0, len(ids), BATCH):
        rows = connection.execute(
            sa.select(DOCUMENTS.c.document_id, DOCUMENTS.c.format, DOCUMENTS.c.extra, DOCUMENTS.c.tree).where(
                DOCUMENTS.c.document_id.in_(ids[first : first + BATCH])
            )
        ).all()
        for document_id, fmt, extra, tree in rows:
            metadata = dict(extra or {})
            report = report_of_stored(fmt, tree, metadata)
            connection.execute(
                sa.update(DOCUMENTS)
                .where(DOCUMENTS.c.document_id == document_id)
                .values(parse_report=report.SerializeToString(), extra=metadata)
            )
