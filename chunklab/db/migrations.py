"""Each service's schema brought to the newest revision its code knows, when the
service opens its database (chunklab.db.make_sessionmaker; ADR 0067).

A service keeps its Alembic revisions in its own folder: the nearest package
above the module that declares its `Base` with a `migrations/` folder
(services/ingest/migrations/, …), whose env.py hands over to `run_env` here.
Its revision is kept in a version table of its own, alembic_version_<service>,
so services that share one database (one CHUNKLAB_DATABASE_URL) never read
each other's.

`upgrade_to_head` meets three kinds of database:
- an empty one: every revision runs, from the baseline on;
- one the previous release made with `create_all` (the service's tables, no
  version table): the baseline revision keeps the tables that exist and only
  creates the missing ones, so the database ends stamped as the baseline, its
  rows untouched, and the later revisions run on it;
- one stamped with a revision this code does not know (a newer ChunkLab
  upgraded it): the service refuses to start (SchemaTooNew) and changes nothing.
The whole upgrade is one transaction under a lock (PostgreSQL's advisory lock,
SQLite's write lock), so replicas starting together upgrade once, in turn.
"""

from __future__ import annotations

import logging
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, MetaData, inspect, text

log = logging.getLogger(__name__)


class SchemaTooNew(SystemExit):
    """The database's revision is newer than this code: the service must not start.

    A SystemExit, so that a service whose start meets it ends with this message
    and exit code 1 rather than a traceback, and no `except Exception` on the
    way swallows it."""


@dataclass(frozen=True)
class Schema:
    """One service's tables and the folder of their revisions."""

    name: str
    folder: Path
    metadata: MetaData

    @property
    def version_table(self) -> str:
        return f"alembic_version_{self.name}"


def schema_of(base) -> Schema:
    """The schema of a declarative Base: the nearest package above its module that
    holds a migrations/ folder is the service, and names the schema (a service may
    keep its tables in a sub-package, such as services/evaluator/storage/)."""
    module = Path(sys.modules[base.__module__].__file__).resolve()
    package = next((p for p in module.parents if (p / "migrations").is_dir()), module.parent)
    return Schema(package.name, package / "migrations", base.metadata)


def alembic_config(schema: Schema) -> Config:
    """Alembic's configuration for this schema, with no alembic.ini: env.py reads
    the schema (and the connection upgrade_to_head adds) from its attributes."""
    config = Config()
    config.set_main_option("script_location", str(schema.folder))
    config.attributes["schema"] = schema
    return config


def upgrade_to_head(engine: Engine, schema: Schema) -> None:
    """Upgrades the database to the newest revision of `schema`; refuses one
    stamped with a revision it does not know."""
    config = alembic_config(schema)
    script = ScriptDirectory.from_config(config)
    with engine.begin() as connection:
        # Replicas starting at once take turns; the lock ends with the transaction.
        if connection.dialect.name == "postgresql":
            # However long an upgrade takes (no lock_timeout).
            connection.execute(text("SET LOCAL lock_timeout = 0"))
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(schema.version_table.encode())}
            )
        elif connection.dialect.name == "sqlite":
            # The file's write lock before anything is read: the others wait (busy_timeout).
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        current = MigrationContext.configure(
            connection, opts={"version_table": schema.version_table}
        ).get_current_heads()
        refuse_unknown(script, current, schema, engine)
        if not current and set(inspect(connection).get_table_names()) & set(schema.metadata.tables):
            log.info(
                "the %s database has the previous release's tables and no %s table: "
                "keeping them as revision %s (baseline)",
                schema.name,
                schema.version_table,
                script.get_base(),
            )
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def refuse_unknown(script: ScriptDirectory, current: tuple[str, ...], schema: Schema, engine: Engine) -> None:
    for revision in current:
        try:
            known = script.get_revision(revision) is not None
        except CommandError:
            known = False
        if not known:
            raise SchemaTooNew(
                f"chunklab {schema.name}: the database {engine.url.render_as_string(hide_password=True)} is at "
                f"schema revision {revision!r} ({schema.version_table}), which this ChunkLab does not know (the "
                f"newest it knows is {script.get_current_head()!r}): a newer ChunkLab upgraded it. Upgrade "
                "ChunkLab to that release or later to use this database (or point CHUNKLAB_DATABASE_URL at "
                "another one); nothing in it was changed"
            )


def create_missing(tables: MetaData) -> None:
    """A baseline revision's upgrade: creates those of its frozen tables that the
    database lacks and keeps the ones it has, rows and all."""
    from alembic import op

    tables.create_all(op.get_bind(), checkfirst=True)


def run_env(metadata: MetaData) -> None:
    """The body of every service's migrations/env.py: runs the revisions on the
    connection upgrade_to_head holds, in its transaction (batch mode on SQLite,
    which ALTERs little)."""
    from alembic import context

    connection: Connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=context.config.attributes["schema"].version_table,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
