"""Alembic's entry point for the ingest schema (chunklab/db/migrations.py runs it)."""

from chunklab.db.migrations import run_env
from services.ingest.store import Base

run_env(Base.metadata)
