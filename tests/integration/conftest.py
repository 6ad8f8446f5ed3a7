"""Fixtures of the integration tests."""

from __future__ import annotations

import pytest

from tests.support.evaluator_server import serve_evaluator
from tests.support.town import TIMEOUT_S, Peers


@pytest.fixture
def evaluator(database_url):
    """The evaluator behind gRPC in process, its peers serving the town's document, on an empty
    database: each test runs on SQLite, then on PostgreSQL (a module may define its own)."""
    peers = Peers()
    with serve_evaluator(peers, database_url, TIMEOUT_S, max_retries=1, judge_attempts=2) as stub:
        yield stub, peers
