"""The ingest service's tables: one row per document with its canonical text
and its parse (a serialized DocumentTree) with its parse report (a serialized ParseReport,
services/ingest/report.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("collection", "content_hash", name="uq_collection_hash"),)

    document_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(512))
    format: Mapped[int] = mapped_column(Integer)
    collection: Mapped[str] = mapped_column(String(128), index=True)
    language: Mapped[str] = mapped_column(String(16), index=True)
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    size_bytes: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    character_count: Mapped[int] = mapped_column(Integer)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    text: Mapped[str] = mapped_column(Text)
    tree: Mapped[bytes] = mapped_column(LargeBinary)
    # Since ingest_0002 (ADR 0104); the migration computed it for the documents stored before.
    parse_report: Mapped[bytes] = mapped_column(LargeBinary)
