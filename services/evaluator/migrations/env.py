"""Alembic's entry point for the evaluator schema (chunklab/migrations.py runs it)."""

from chunklab.migrations import run_env
from services.evaluator.storage.tables import Base

run_env(Base.metadata)
