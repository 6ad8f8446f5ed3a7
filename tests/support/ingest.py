"""Ingest under test: the service on an empty database with its chunk deletions
recorded, and the documents the tests upload (DOCX files built with
python-docx, zips of any members)."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime

import docx

from chunklab.db.sessions import make_sessionmaker
from chunklab.v1 import documents_pb2 as pb
from services.ingest.service import IngestService
from services.ingest.store import Base, DocumentRow


def docx_bytes(build) -> bytes:
    document = docx.Document()
    build(document)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def handbook(document) -> None:
    props = document.core_properties
    props.author, props.title, props.subject = "Ada Lovelace", "Staff handbook", "HR"
    props.created = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
    document.add_heading("Staff handbook", 0)
    document.add_paragraph("Welcome to the team.")
    document.add_heading("Working hours", 1)
    document.add_paragraph("")  # an empty paragraph is dropped
    document.add_heading("Core hours", 2)
    document.add_paragraph("Everyone is in between ten and four.")
    document.add_paragraph("Monday to Thursday", style="List Bullet")
    document.add_paragraph("Friday until two", style="List Bullet")
    document.add_heading("Overtime", 3)
    document.add_paragraph("Ask your lead first.", style="List Number")
    document.add_paragraph("Log it the same week.", style="List Number")
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([("Grade", "Rate"), ("A", "1.5x"), ("B | C", "2x")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Leave", 1)
    document.add_heading("Parental leave", 2)  # a heading with no body


def ingest_service(database_url: str, deleted: list[str]) -> IngestService:
    """The service on the database at database_url; the documents whose chunks it
    deletes are appended to `deleted`."""
    sessions = make_sessionmaker(database_url, Base)

    def delete_chunks(document_id: str) -> int:
        deleted.append(document_id)
        return 3

    return IngestService(sessions, max_upload_bytes=2_000_000, delete_chunks=delete_chunks)


def create(service, name: str, data: bytes, *, collection="", language="", published_at=None, chunk=1024):
    pieces = (data[i : i + chunk] for i in range(0, len(data), chunk))
    return service.create(name, pb.DOCUMENT_FORMAT_UNSPECIFIED, collection, language, published_at, 0, pieces)


def rows(service) -> int:
    with service._sessions() as session:
        return session.query(DocumentRow).count()


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()
