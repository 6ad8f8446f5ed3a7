"""The retriever's own small database (SQLite in the data folder, or the
configured database): which vector indexes exist, one record per index set
(embedding model, document, strategy, configuration) with the IndexHeader's
spec and expansion kind, its sizes, whether it is the active set of its
(model, document, strategy), whether it is pinned and when it was last used,
and the freshness windows that operators changed (ADR 0038).

The set records are read on the query path (which expansion a hit's set
declared, the `window` knob it was indexed with): they are cached here and
forgotten whenever a document's sets change. Beside each record, in a table
of its own, the set's BM25 statistics (services/retriever/search/term_stats.py),
written in the same transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, LargeBinary, String, delete, func, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from chunklab.db.sessions import make_sessionmaker
from chunklab.settings import DB_BUSY_TIMEOUT_S
from chunklab.timeutil import utcnow
from services.retriever.search.coverage import SetRow as CoverageRow
from services.retriever.search.term_stats import TermCounts
from services.retriever.set_records import SetRecord


def _terms_of_the_set():
    """The join of an index set's row with its BM25 terms' row (the same set's key)."""
    return (
        (SetTermsRow.embedding_model == IndexSetRow.embedding_model)
        & (SetTermsRow.document_id == IndexSetRow.document_id)
        & (SetTermsRow.strategy == IndexSetRow.strategy)
        & (SetTermsRow.config_id == IndexSetRow.config_id)
    )


class Base(DeclarativeBase):
    pass


class VectorIndexRow(Base):
    __tablename__ = "retriever_vector_indexes"

    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    embedding_model: Mapped[str] = mapped_column(String(256), index=True)
    dimension: Mapped[int] = mapped_column(Integer)


class IndexSetRow(Base):
    __tablename__ = "retriever_index_sets"

    embedding_model: Mapped[str] = mapped_column(String(256), primary_key=True)
    document_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    strategy: Mapped[str] = mapped_column(String(128), primary_key=True)
    config_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    dimension: Mapped[int] = mapped_column(Integer)
    spec: Mapped[dict] = mapped_column(JSON, default=dict)
    expansion: Mapped[int] = mapped_column(Integer, default=0)
    document_name: Mapped[str] = mapped_column(String(512), default="")
    collection: Mapped[str] = mapped_column(String(128), default="")
    published_ts: Mapped[float] = mapped_column(Float, default=0.0)
    points: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(Integer, default=0)
    indexed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    archived: Mapped[bool] = mapped_column(Boolean, default=False, index=True)


class SetTermsRow(Base):
    """A set's BM25 statistics: its searchable chunks, the language they are
    in, and the sorted term ids with their chunk frequencies (TermCounts)."""

    __tablename__ = "retriever_set_terms"

    embedding_model: Mapped[str] = mapped_column(String(256), primary_key=True)
    document_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    strategy: Mapped[str] = mapped_column(String(128), primary_key=True)
    config_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    language: Mapped[str] = mapped_column(String(16), default="")
    chunks: Mapped[int] = mapped_column(Integer, default=0)
    counts: Mapped[bytes] = mapped_column(LargeBinary)


class FreshnessWindowRow(Base):
    __tablename__ = "retriever_freshness_windows"

    collection: Mapped[str] = mapped_column(String(128), primary_key=True)
    max_age_days: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


# What a set's record holds, as a plain dict (the sweeper writes these into an archive).
SET_FIELDS = (
    "embedding_model",
    "document_id",
    "strategy",
    "config_id",
    "dimension",
    "spec",
    "expansion",
    "document_name",
    "collection",
    "published_ts",
    "points",
    "bytes",
    "active",
    "pinned",
    "archived",
)
SetKey = tuple[str, str, str, str]  # (embedding model, document, strategy, config_id)


@dataclass(frozen=True)
class SetInfo:
    """What a query needs of a hit's set."""

    expansion: int
    window: int | None  # the `window` knob it was indexed with, if any


@dataclass(frozen=True)
class StatsRow:
    embedding_model: str
    strategy: str
    collection: str
    points: int
    documents: int
    bytes: int


class RetrieverStore:
    def __init__(self, url: str, busy_timeout_s: float = DB_BUSY_TIMEOUT_S) -> None:
        self._sessions: sessionmaker = make_sessionmaker(url, Base, busy_timeout_s)
        self._info_cache: dict[SetKey, SetInfo | None] = {}
        self._cache_lock = threading.Lock()

    # -- vector indexes --------------------------------------------------------

    def vector_indexes(self) -> list[tuple[str, str, int]]:
        with self._sessions() as session:
            rows = session.scalars(select(VectorIndexRow).order_by(VectorIndexRow.name)).all()
            return [(r.name, r.embedding_model, r.dimension) for r in rows]

    def add_vector_index(self, name: str, model: str, dimension: int) -> None:
        with self._sessions.begin() as session:
            if session.get(VectorIndexRow, name) is None:
                session.add(VectorIndexRow(name=name, embedding_model=model, dimension=dimension))

    # -- index sets ------------------------------------------------------------

    def record_set(self, *, terms: TermCounts | None = None, language: str = "", **values) -> None:
        """Writes a set's record, and its BM25 statistics when given (else the
        ones it has stay). With active=True the other sets of its (model,
        document, strategy) stop being active, in the same transaction."""
        key = tuple(values[k] for k in ("embedding_model", "document_id", "strategy", "config_id"))
        now = utcnow()
        with self._sessions.begin() as session:
            if terms is not None:
                self._write_terms(session, key, terms, language)
            row = session.get(IndexSetRow, key)
            if row is None:
                row = IndexSetRow(embedding_model=key[0], document_id=key[1], strategy=key[2], config_id=key[3])
                session.add(row)
            for name, value in values.items():
                setattr(row, name, value)
            row.indexed_at = row.last_used_at = now
            row.archived = values.get("archived", False)
            if values.get("active"):
                self._deactivate_others(session, key)
        self._forget(key[1])

    @staticmethod
    def _write_terms(session, key: SetKey, terms: TermCounts, language: str) -> None:
        row = session.get(SetTermsRow, key)
        if row is None:
            row = SetTermsRow(embedding_model=key[0], document_id=key[1], strategy=key[2], config_id=key[3])
            session.add(row)
        row.language, row.chunks, row.counts = language, terms.chunks, terms.to_bytes()

    def record_terms(self, key: SetKey, terms: TermCounts, language: str) -> None:
        """Writes the statistics of a set recorded before sets had them."""
        with self._sessions.begin() as session:
            self._write_terms(session, key, terms, language)

    def term_counts(self, keys: list[SetKey]) -> dict[SetKey, TermCounts]:
        """The statistics of these sets (those that have them)."""
        found: dict[SetKey, TermCounts] = {}
        with self._sessions() as session:
            for key in keys:
                row = session.get(SetTermsRow, key)
                if row is not None:
                    found[key] = TermCounts.from_bytes(row.chunks, row.counts)
        return found

    @staticmethod
    def _deactivate_others(session, key: SetKey) -> None:
        others = select(IndexSetRow).where(
            IndexSetRow.embedding_model == key[0],
            IndexSetRow.document_id == key[1],
            IndexSetRow.strategy == key[2],
            IndexSetRow.config_id != key[3],
            IndexSetRow.active.is_(True),
        )
        for other in session.scalars(others):
            other.active = False

    def set_flags(self, key: SetKey, *, active: bool | None = None, pinned: bool | None = None) -> dict | None:
        """Makes a set active (the others of its document and strategy not) or
        pins it; the record afterwards, None when there is no such set."""
        with self._sessions.begin() as session:
            row = session.get(IndexSetRow, key)
            if row is None or row.archived:
                return None
            if active:
                self._deactivate_others(session, key)
                row.active = True
            if pinned is not None:
                row.pinned = pinned
            found = _as_dict(row)
        self._forget(key[1])
        return found

    def info(self, key: SetKey) -> SetInfo | None:
        with self._cache_lock:
            if key in self._info_cache:
                return self._info_cache[key]
        with self._sessions() as session:
            row = session.get(IndexSetRow, key)
            info = None
            if row is not None:
                window = (row.spec or {}).get("knobs", {}).get("window")
                info = SetInfo(row.expansion, int(window) if window is not None else None)
        with self._cache_lock:
            self._info_cache[key] = info
        return info

    def _forget(self, document_id: str) -> None:
        with self._cache_lock:
            for key in [k for k in self._info_cache if k[1] == document_id]:
                del self._info_cache[key]

    def indexed_set(self, key: SetKey) -> dict | None:
        """A set's record; an empty config_id names the active set. None when
        there is no such set, or a sweep archived it."""
        model, document_id, strategy, config_id = key
        query = select(IndexSetRow).where(
            IndexSetRow.embedding_model == model,
            IndexSetRow.document_id == document_id,
            IndexSetRow.strategy == strategy,
            IndexSetRow.archived.is_(False),
        )
        query = (
            query.where(IndexSetRow.config_id == config_id) if config_id else query.where(IndexSetRow.active.is_(True))
        )
        with self._sessions() as session:
            row = session.scalars(query).first()
            return _as_dict(row) if row is not None else None

    def list_sets(
        self, model: str = "", document_id: str = "", strategy: str = "", *, offset: int = 0, limit: int | None = None
    ) -> list[dict]:
        """Sets not archived, by document, strategy, then newest first."""
        query = select(IndexSetRow).where(IndexSetRow.archived.is_(False))
        for column, value in (
            (IndexSetRow.embedding_model, model),
            (IndexSetRow.document_id, document_id),
            (IndexSetRow.strategy, strategy),
        ):
            if value:
                query = query.where(column == value)
        query = (
            query.order_by(
                IndexSetRow.document_id, IndexSetRow.strategy, IndexSetRow.indexed_at.desc(), IndexSetRow.config_id
            )
            .offset(offset)
            .limit(limit)
        )
        with self._sessions() as session:
            return [_as_dict(r) for r in session.scalars(query)]

    def has_config(self, model: str, strategy: str, config_id: str) -> bool:
        """Whether any document has a set of the strategy with this configuration."""
        query = (
            select(IndexSetRow.document_id)
            .where(
                IndexSetRow.embedding_model == model,
                IndexSetRow.strategy == strategy,
                IndexSetRow.config_id == config_id,
                IndexSetRow.archived.is_(False),
            )
            .limit(1)
        )
        with self._sessions() as session:
            return session.execute(query).first() is not None

    def coverage_rows(self, model: str, document_ids: Sequence[str] = ()) -> list[CoverageRow]:
        """What search/coverage.py reads of every set record of the model (set_records)."""
        return self.set_records(model, document_ids)

    def set_records(self, model: str, document_ids: Sequence[str] = ()) -> list[SetRecord]:
        """Every set record of the model (archived ones too), of these documents where some
        are named, with its language where its term statistics hold one: one read serves a
        query's coverage and the sets it searches (ADR 0144)."""
        query = (
            select(
                IndexSetRow.document_id,
                IndexSetRow.document_name,
                IndexSetRow.strategy,
                IndexSetRow.config_id,
                IndexSetRow.active,
                IndexSetRow.archived,
                IndexSetRow.collection,
                SetTermsRow.language,
                IndexSetRow.published_ts,
                IndexSetRow.indexed_at,
            )
            .outerjoin(SetTermsRow, _terms_of_the_set())
            .where(IndexSetRow.embedding_model == model)
        )
        if document_ids:
            query = query.where(IndexSetRow.document_id.in_(list(document_ids)))
        with self._sessions() as session:
            return [SetRecord(*row) for row in session.execute(query)]

    def touch(self, model: str, strategy: str, config_id: str) -> None:
        """Marks every set of a configuration used now (retention keeps used sets)."""
        with self._sessions.begin() as session:
            session.execute(
                update(IndexSetRow)
                .where(
                    IndexSetRow.embedding_model == model,
                    IndexSetRow.strategy == strategy,
                    IndexSetRow.config_id == config_id,
                )
                .values(last_used_at=utcnow())
            )

    def sets_of(self, document_id: str) -> list[dict]:
        with self._sessions() as session:
            rows = session.scalars(select(IndexSetRow).where(IndexSetRow.document_id == document_id)).all()
            return [{name: getattr(r, name) for name in SET_FIELDS} for r in rows]  # JSON-safe: archives hold them

    def retention_candidates(self) -> list[dict]:
        """Sets retention may drop (inactive, unpinned, not archived), least recently used first."""
        query = (
            select(IndexSetRow)
            .where(IndexSetRow.active.is_(False), IndexSetRow.pinned.is_(False), IndexSetRow.archived.is_(False))
            .order_by(IndexSetRow.last_used_at, IndexSetRow.document_id, IndexSetRow.config_id)
        )
        with self._sessions() as session:
            return [_as_dict(r) for r in session.scalars(query)]

    def delete_set(self, key: SetKey) -> None:
        with self._sessions.begin() as session:
            for table in (IndexSetRow, SetTermsRow):
                row = session.get(table, key)
                if row is not None:
                    session.delete(row)
        self._forget(key[1])

    def set_archived(self, document_id: str, archived: bool) -> None:
        with self._sessions.begin() as session:
            for row in session.scalars(select(IndexSetRow).where(IndexSetRow.document_id == document_id)):
                row.archived = archived
        self._forget(document_id)

    def delete_document(self, document_id: str) -> None:
        with self._sessions.begin() as session:
            for table in (IndexSetRow, SetTermsRow):
                session.execute(delete(table).where(table.document_id == document_id))
        self._forget(document_id)

    def stats(self) -> list[StatsRow]:
        columns = (IndexSetRow.embedding_model, IndexSetRow.strategy, IndexSetRow.collection)
        query = (
            select(
                *columns,
                func.sum(IndexSetRow.points),
                func.count(func.distinct(IndexSetRow.document_id)),
                func.sum(IndexSetRow.bytes),
            )
            .where(IndexSetRow.archived.is_(False))
            .group_by(*columns)
            .order_by(*columns)
        )
        with self._sessions() as session:
            return [StatsRow(m, s, c, int(p or 0), int(d), int(b or 0)) for m, s, c, p, d, b in session.execute(query)]

    # -- freshness windows -----------------------------------------------------

    def freshness_windows(self) -> dict[str, int]:
        with self._sessions() as session:
            return {r.collection: r.max_age_days for r in session.scalars(select(FreshnessWindowRow))}

    def put_freshness_window(self, collection: str, max_age_days: int) -> None:
        with self._sessions.begin() as session:
            row = session.get(FreshnessWindowRow, collection)
            if row is None:
                session.add(FreshnessWindowRow(collection=collection, max_age_days=max_age_days, updated_at=utcnow()))
            else:
                row.max_age_days, row.updated_at = max_age_days, utcnow()


def _as_dict(row: IndexSetRow) -> dict:
    return {
        **{name: getattr(row, name) for name in SET_FIELDS},
        "indexed_at": row.indexed_at,
        "last_used_at": row.last_used_at,
    }
