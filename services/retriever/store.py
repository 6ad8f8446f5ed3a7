"""The retriever's own small database (SQLite in the data folder, or the
configured database): which vector indexes exist, one record per indexed
(embedding model, document, strategy) with the IndexHeader's spec and its
sizes, and the freshness windows that operators changed.

The spec record is what sentence-window expansion reads for its default W
(the `window` knob the document was indexed with), and what index
statistics are summed from.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, String, delete, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from chunklab.db import make_sessionmaker
from chunklab.timeutil import utcnow


class Base(DeclarativeBase):
    pass


class VectorIndexRow(Base):
    __tablename__ = "retriever_vector_indexes"

    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    embedding_model: Mapped[str] = mapped_column(String(256), index=True)
    dimension: Mapped[int] = mapped_column(Integer)


class IndexedSetRow(Base):
    __tablename__ = "retriever_indexed_sets"

    embedding_model: Mapped[str] = mapped_column(String(256), primary_key=True)
    document_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    strategy: Mapped[str] = mapped_column(String(128), primary_key=True)
    dimension: Mapped[int] = mapped_column(Integer)
    config_id: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict] = mapped_column(JSON, default=dict)
    document_name: Mapped[str] = mapped_column(String(512), default="")
    collection: Mapped[str] = mapped_column(String(128), default="")
    published_ts: Mapped[float] = mapped_column(Float, default=0.0)
    points: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(Integer, default=0)
    indexed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    archived: Mapped[bool] = mapped_column(Boolean, default=False, index=True)


class FreshnessWindowRow(Base):
    __tablename__ = "retriever_freshness_windows"

    collection: Mapped[str] = mapped_column(String(128), primary_key=True)
    max_age_days: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


SET_FIELDS = (
    "embedding_model", "document_id", "strategy", "dimension", "config_id", "spec", "document_name",
    "collection", "published_ts", "points", "bytes", "archived",
)


@dataclass(frozen=True)
class StatsRow:
    embedding_model: str
    strategy: str
    collection: str
    points: int
    documents: int
    bytes: int


class RetrieverStore:
    def __init__(self, url: str) -> None:
        self._sessions: sessionmaker = make_sessionmaker(url, Base)
        # Spec records are read on the query path (sentence windows): keep them.
        self._spec_cache: dict[tuple[str, str, str], dict | None] = {}
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

    # -- indexed sets ----------------------------------------------------------

    def record_set(self, **values) -> None:
        key = (values["embedding_model"], values["document_id"], values["strategy"])
        with self._sessions.begin() as session:
            row = session.get(IndexedSetRow, key)
            if row is None:
                row = IndexedSetRow(embedding_model=key[0], document_id=key[1], strategy=key[2])
                session.add(row)
            for name, value in values.items():
                setattr(row, name, value)
            row.indexed_at = utcnow()
            row.archived = values.get("archived", False)
        self._forget(key[1])

    def spec_for(self, model: str, document_id: str, strategy: str) -> dict | None:
        key = (model, document_id, strategy)
        with self._cache_lock:
            if key in self._spec_cache:
                return self._spec_cache[key]
        with self._sessions() as session:
            row = session.get(IndexedSetRow, key)
            spec = dict(row.spec) if row is not None else None
        with self._cache_lock:
            self._spec_cache[key] = spec
        return spec

    def _forget(self, document_id: str) -> None:
        with self._cache_lock:
            for key in [k for k in self._spec_cache if k[1] == document_id]:
                del self._spec_cache[key]

    def indexed_set(self, model: str, document_id: str, strategy: str) -> dict | None:
        """The record of how a document is indexed for a strategy and model (None
        when it is not, or was archived)."""
        with self._sessions() as session:
            row = session.get(IndexedSetRow, (model, document_id, strategy))
            if row is None or row.archived:
                return None
            return {**{name: getattr(row, name) for name in SET_FIELDS}, "indexed_at": row.indexed_at}

    def sets_of(self, document_id: str) -> list[dict]:
        with self._sessions() as session:
            rows = session.scalars(select(IndexedSetRow).where(IndexedSetRow.document_id == document_id)).all()
            return [{name: getattr(r, name) for name in SET_FIELDS} for r in rows]

    def set_archived(self, document_id: str, archived: bool) -> None:
        with self._sessions.begin() as session:
            for row in session.scalars(select(IndexedSetRow).where(IndexedSetRow.document_id == document_id)):
                row.archived = archived

    def delete_document(self, document_id: str) -> None:
        with self._sessions.begin() as session:
            session.execute(delete(IndexedSetRow).where(IndexedSetRow.document_id == document_id))
        self._forget(document_id)

    def stats(self) -> list[StatsRow]:
        columns = (IndexedSetRow.embedding_model, IndexedSetRow.strategy, IndexedSetRow.collection)
        query = (
            select(*columns, func.sum(IndexedSetRow.points), func.count(), func.sum(IndexedSetRow.bytes))
            .where(IndexedSetRow.archived.is_(False))
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
