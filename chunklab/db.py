"""SQLAlchemy engines the way every service wants them: SQLite with WAL and
foreign keys switched on per connection."""

from __future__ import annotations

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import DeclarativeBase, sessionmaker


def make_engine(url: str) -> Engine:
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.close()

    return engine


def make_sessionmaker(url: str, base: type[DeclarativeBase]) -> sessionmaker:
    engine = make_engine(url)
    base.metadata.create_all(engine)
    return sessionmaker(engine, expire_on_commit=False)
