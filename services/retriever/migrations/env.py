"""Alembic's entry point for the retriever schema (chunklab/db/migrations.py runs it)."""

from chunklab.db.migrations import run_env
from services.retriever.store import Base

run_env(Base.metadata)
