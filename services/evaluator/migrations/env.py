"""Alembic's entry point for the evaluator schema (chunklab/db/migrations.py runs it)."""

from chunklab.db.migrations import run_env
from services.evaluator.storage.tables import Base

run_env(Base.metadata)
