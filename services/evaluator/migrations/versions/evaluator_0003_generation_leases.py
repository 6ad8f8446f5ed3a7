"""Question generation leases (ADR 0153): which evaluator replica runs a generation, until
when, as experiment_leases does for experiments. A new table; nothing else changes.

Revision ID: evaluator_0003
"""

import sqlalchemy as sa
from alembic import op

revision = "evaluator_0003"
down_revision = "evaluator_0002"


def upgrade() -> None:
    op.create_table(
        "generation_leases",
        sa.Column("generation_id", sa.String(length=36), nullable=False),
        sa.Column("replica", sa.String(length=256), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["generation_id"], ["generations.generation_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("generation_id"),
    )


def downgrade() -> None:
    op.drop_table("generation_leases")
