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

import pytest

from tests.support.postgres_server import PostgresServer

BACKENDS = ("sqlite", "postgresql")
_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> PostgresServer:
    server = PostgresServer()
    yield server
    server.stop()


def _url(request: pytest.FixtureRequest, folder) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{folder / 'test.sqlite3'}"
    return request.getfixturevalue("postgres").database(f"test_{next(_numbers)}")


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    """An empty database for one test: a SQLite file, then a PostgreSQL database."""
    return _url(request, tmp_path)


@pytest.fixture(scope="module", params=BACKENDS)
def module_database_url(request, tmp_path_factory) -> str:
    """An empty database shared by a module's tests (for a module-scoped service)."""
    return _url(request, tmp_path_factory.mktemp("database"))
