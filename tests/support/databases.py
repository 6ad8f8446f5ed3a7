"""The databases that persistence tests run on (a pytest plugin, loaded by
tests/conftest.py): a test or fixture that asks for `database_url` runs twice,
once on a SQLite file of its own and once on a real PostgreSQL server, so each
service's storage is checked with the same SQLAlchemy code on both backends
the services support.

One PostgreSQL server serves the whole session, started the first time a test
needs it. A new database costs a few tenths of a second, so `database_url`
gives each test module one and empties it (TRUNCATE) before each test: no
test sees another's rows, and the services find their schema already at head.
`empty_database_url` is a new database with no tables at all, for the tests of
migrations themselves; `module_database_url` one for a module-scoped service."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import make_url

from tests.support.postgres_server import PostgresServer

BACKENDS = ("sqlite", "postgresql")
_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> PostgresServer:
    server = PostgresServer()
    yield server
    server.stop()


def _admin(url: str) -> psycopg.Connection:
    return psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True)


def _end_connections(connection: psycopg.Connection, name: str) -> None:
    """Ends the connections earlier tests' engines left open (they are never
    disposed of), so that a session stays under the server's max_connections."""
    connection.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (name,)
    )


@contextmanager
def fresh_database(request: pytest.FixtureRequest, backend: str, folder) -> Iterator[str]:
    """The URL of a new database with no tables on `backend` (sqlite: a file in
    `folder`), dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'test.sqlite3'}"
        return
    server = request.getfixturevalue("postgres")
    name = f"test_{next(_numbers)}"
    yield server.database(name)
    with _admin(server.url()) as admin:
        _end_connections(admin, name)
        admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def module_postgres_database(request) -> str:
    """The PostgreSQL database `database_url` empties for each test of a module."""
    with fresh_database(request, "postgresql", None) as url:
        yield url


@contextmanager
def database_without_rows(request: pytest.FixtureRequest, backend: str, folder) -> Iterator[str]:
    """A database holding no rows on `backend`: a new SQLite file in `folder`, or
    the module's PostgreSQL database with every table emptied (the version
    tables kept, so its schema stays at the revision it had)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'test.sqlite3'}"
        return
    url = request.getfixturevalue("module_postgres_database")
    with _admin(url) as database:
        _end_connections(database, make_url(url).database)
        tables = [
            sql.Identifier(t)
            for (t,) in database.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'alembic_version_%'"
            )
        ]
        if tables:
            database.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(sql.SQL(", ").join(tables)))
    yield url


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    """A database with no rows for one test: a SQLite file, then PostgreSQL."""
    with database_without_rows(request, request.param, tmp_path) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def empty_database_url(request, tmp_path) -> str:
    """A new database with no tables for one test: a SQLite file, then PostgreSQL."""
    with fresh_database(request, request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope="module", params=BACKENDS)
def module_database_url(request, tmp_path_factory) -> str:
    """A new database shared by a module's tests (for a module-scoped service)."""
    with fresh_database(request, request.param, tmp_path_factory.mktemp("database")) as url:
        yield url
