"""Experiment leases (ADR 0065): which evaluator replica runs an experiment, until
when, and whether another replica was asked to cancel it. A new table; nothing
else changes.

Revision ID: evaluator_0002
"""

import sqlalchemy as sa
from alembic import op

revision = "evaluator_0002"
down_revision = "evaluator_0001"


def upgrade() -> None:
    op.create_table(
        "experiment_leases",
        sa.Column("experiment_id", sa.String(length=36), nullable=False),
        sa.Column("replica", sa.String(length=256), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["experiment_id"], ["experiments.experiment_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("experiment_id"),
    )
