"""Fixtures of the unit tests."""

from __future__ import annotations

import pytest

from services.ingest.service import IngestService
from tests.support.ingest import ingest_service


@pytest.fixture
def service(tmp_path, deleted) -> IngestService:
    """Ingest on an empty SQLite file: the database of the reading tests (tests/integration/test_ingest.py
    runs the storage itself on SQLite and PostgreSQL)."""
    return ingest_service(f"sqlite:///{tmp_path / 'ingest.sqlite3'}", deleted)
