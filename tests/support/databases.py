"""The databases that persistence tests run on (a pytest plugin, loaded by
tests/conftest.py): a test or fixture that asks for `database_url` runs twice,
once on a SQLite file of its own and once on a fresh database of a real
PostgreSQL server, so each service's storage is checked with the same
SQLAlchemy code on both backends the services support.

One PostgreSQL server serves the whole session, started the first time a
test needs it; each test (or module, for `module_database_url`) gets a new
database in it, so no test sees another's rows."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from tests.support.postgres_server import PostgresServer

BACKENDS = ("sqlite", "postgresql")
_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> PostgresServer:
    server = PostgresServer()
    yield server
    server.stop()


@contextmanager
def fresh_database(request: pytest.FixtureRequest, backend: str, folder) -> Iterator[str]:
    """The URL of an empty database on `backend` (sqlite: a file in `folder`),
    dropped afterwards; for a fixture whose own parameters pick the backend."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'test.sqlite3'}"
        return
    server = request.getfixturevalue("postgres")
    name = f"test_{next(_numbers)}"
    yield server.database(name)
    # The engines a test made are never disposed of: end their connections, so
    # that a session of hundreds of tests stays under the server's max_connections.
    with psycopg.connect(server.url().replace("postgresql+psycopg", "postgresql"), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        admin.execute(f'DROP DATABASE "{name}"')


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    """An empty database for one test: a SQLite file, then a PostgreSQL database."""
    with fresh_database(request, request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope="module", params=BACKENDS)
def module_database_url(request, tmp_path_factory) -> str:
    """An empty database shared by a module's tests (for a module-scoped service)."""
    with fresh_database(request, request.param, tmp_path_factory.mktemp("database")) as url:
        yield url
