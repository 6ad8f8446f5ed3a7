"""Alembic's entry point for the ingest schema (chunklab/migrations.py runs it)."""

from chunklab.migrations import run_env
from services.ingest.store import Base

run_env(Base.metadata)
