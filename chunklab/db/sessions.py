"""SQLAlchemy engines the way every service wants them: SQLite with WAL and
foreign keys switched on per connection; on PostgreSQL (CHUNKLAB_DATABASE_URL)
the same code through psycopg. On both a write waits for another writer's lock
at most `busy_timeout_s` (SQLite's busy_timeout, PostgreSQL's lock_timeout)
before it fails as UNAVAILABLE with the same message. Opening a service's
sessions upgrades its schema to the newest revision first
(chunklab/db/migrations.py)."""

from __future__ import annotations

import sqlite3
from pathlib import PurePath

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.orm import DeclarativeBase, sessionmaker

from chunklab.db.migrations import schema_of, upgrade_to_head
from chunklab.errors import Unavailable
from chunklab.settings import DB_BUSY_TIMEOUT_S

# SQLite's primary result codes for "another connection holds the lock".
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
# PostgreSQL's SQLSTATE for lock_not_available: lock_timeout passed.
_LOCK_NOT_AVAILABLE = "55P03"


def is_busy(exc: BaseException) -> bool:
    """Whether a driver's error means the database stayed locked by another writer."""
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in _BUSY_CODES
    return getattr(exc, "sqlstate", None) == _LOCK_NOT_AVAILABLE


def busy_error(name: str, busy_timeout_s: float) -> Unavailable:
    """What a caller is told when the database stayed locked: retryable, nothing saved."""
    return Unavailable(
        f"the database {name} stayed locked by another writer for over {busy_timeout_s:g}s "
        "(CHUNKLAB_DB_BUSY_TIMEOUT_S), so this change was not saved; try again"
    )


def make_engine(url: str, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> Engine:
    options = {}
    if make_url(url).get_backend_name() == "postgresql":
        options["connect_args"] = {"options": f"-c lock_timeout={int(busy_timeout_s * 1000)}"}
    engine = create_engine(url, future=True, **options)
    name = PurePath(engine.url.database or "memory").name

    @event.listens_for(engine, "handle_error")
    def _locked_is_unavailable(context):
        # Raised in place of SQLAlchemy's OperationalError, after its clean-up
        # (the transaction is rolled back by the session that ran it).
        if is_busy(context.original_exception):
            raise busy_error(name, busy_timeout_s) from None

    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
            cursor.close()

    return engine


def make_sessionmaker(url: str, base: type[DeclarativeBase], busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> sessionmaker:
    """Sessions on the database at `url`, its schema (the tables of `base`)
    upgraded to the newest revision; refuses (SchemaTooNew) one newer than that."""
    engine = make_engine(url, busy_timeout_s)
    upgrade_to_head(engine, schema_of(base))
    return sessionmaker(engine, expire_on_commit=False)
