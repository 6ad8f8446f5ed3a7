"""Ingest logic: bytes in, one stored document with its parse out.

Knows nothing of gRPC: it takes plain values and raises chunklab.errors.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
import zipfile
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import PurePath

from docx.exceptions import PythonDocxError
from docx.opc.exceptions import OpcError
from lxml import etree
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from chunklab.errors import InvalidArgument, NotFound, ResourceExhausted
from chunklab.languages import check_language
from chunklab.rpc import limits
from chunklab.rpc.paging import check_page_size, decode_offset, encode_token
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers import markdown
from services.ingest.readers.decoding import decode_text
from services.ingest.readers.docx import read_docx
from services.ingest.readers.html import read_html
from services.ingest.readers.html_meta import parse_date
from services.ingest.readers.language import detect as detect_language
from services.ingest.readers.markdown import Parsed
from services.ingest.readers.pdf import read_pdf
from services.ingest.report import build_report
from services.ingest.safety.docx_checks import check_docx_archive
from services.ingest.safety.pdf_checks import check_pdf
from services.ingest.store import DocumentRow

_EXTENSIONS = {
    ".md": pb.DOCUMENT_FORMAT_MARKDOWN,
    ".markdown": pb.DOCUMENT_FORMAT_MARKDOWN,
    ".txt": pb.DOCUMENT_FORMAT_TEXT,
    ".text": pb.DOCUMENT_FORMAT_TEXT,
    ".docx": pb.DOCUMENT_FORMAT_DOCX,
    ".pdf": pb.DOCUMENT_FORMAT_PDF,
    ".html": pb.DOCUMENT_FORMAT_HTML,
    ".htm": pb.DOCUMENT_FORMAT_HTML,
    ".xhtml": pb.DOCUMENT_FORMAT_HTML,
}


def resolve_format(name: str, declared: int) -> int:
    if declared != pb.DOCUMENT_FORMAT_UNSPECIFIED:
        return declared
    suffix = PurePath(name).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise InvalidArgument(
            f"cannot tell the format of {name!r}: name it .md, .markdown, .txt, .docx, .pdf, .html, .htm or .xhtml, "
            "or declare the format"
        )
    return _EXTENSIONS[suffix]


_PATH_SEPARATORS = re.compile(r"[/\\]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def display_name(header_name: str) -> str:
    """The name a document is shown and stored under (ADR 0124): a display name, never a
    path. Only the last part after a '/' or '\\' is kept ("../../x.md" is "x.md",
    "C:\\Users\\me\\Report (final) v2.pdf" is "Report (final) v2.pdf"), control characters
    are removed and the ends trimmed; nothing left, ".", or ".." is refused."""
    name = _CONTROLS.sub(" ", _PATH_SEPARATORS.split(header_name)[-1]).strip()
    if name in ("", ".", ".."):
        if not header_name.strip():
            raise InvalidArgument("the upload header needs a file name, e.g. handbook.md")
        raise InvalidArgument(
            f"the file name {limits.excerpt(header_name)!r} names no file: a name is shown, not a path, so only "
            "what follows its last '/' or '\\' is kept, and here that is empty; give the file's own name, "
            "e.g. handbook.md"
        )
    return name


def check_no_surrogates(text: str, name: str) -> None:
    """Refuses text holding a lone surrogate (U+D800..U+DFFF): no character, it cannot be
    written as UTF-8, stored on PostgreSQL or sent back to a client (ADR 0124)."""
    found = _SURROGATE.search(text)
    if found is not None:
        at = found.start()
        raise InvalidArgument(
            f"{name!r} holds a lone surrogate (U+{ord(text[at]):04X}) at character {at:,}: that is no "
            "character; save the file again as UTF-8 and upload it"
        )


# What python-docx raises on a package that is a safe zip but not a well-formed
# Word document (parts missing, relationships pointing nowhere, odd XML).
log = logging.getLogger(__name__)

_UNREADABLE_DOCX = (
    KeyError,
    ValueError,
    AttributeError,
    TypeError,
    IndexError,
    etree.XMLSyntaxError,
    zipfile.BadZipFile,
    OpcError,
    PythonDocxError,
)


_FRONT_MATTER_DATE = re.compile(r"^(?:date|published|published_at)\s*:\s*[\"']?([0-9][0-9T:+\-. Z]*)", re.M)


def front_matter_date(text: str) -> datetime | None:
    """`date:` (or `published_at:`) from a Markdown file's YAML front matter, in UTC as the
    HTML reader's dates are (the store keeps the wall time: 09:30+01:00 is kept as 08:30Z)."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    match = _FRONT_MATTER_DATE.search(text[: end if end > 0 else 0])
    return parse_date(match.group(1)) if match else None


def parse_upload(name: str, fmt: int, data: bytes) -> Parsed:
    """The canonical text, tree and metadata of an upload, or a refusal."""
    if fmt == pb.DOCUMENT_FORMAT_PDF:
        return _parse_pdf(name, data)
    if fmt == pb.DOCUMENT_FORMAT_DOCX:
        check_docx_archive(name, data)
        try:
            content = read_docx(data)
        except _UNREADABLE_DOCX as exc:
            log.info("%r is not a readable Word document: %s: %s", name, type(exc).__name__, str(exc)[:500])
            raise InvalidArgument(
                f"{name!r} is not a readable Word document (its parts cannot be parsed; the ingest log says "
                "where); "
                "open it in Word and save it again as .docx"
            ) from None
        if not content.text.strip():
            left_out = f" ({'; '.join(content.warnings)})" if content.warnings else ""
            raise InvalidArgument(f"{name!r} holds no text: every paragraph and table in it is empty{left_out}")
        return Parsed(content.text, content.tree, content.metadata, content.created, warnings=content.warnings)
    if fmt == pb.DOCUMENT_FORMAT_HTML:
        return read_html(name, data)
    text, encoding = decode_text(name, data)
    if not text.strip():
        raise InvalidArgument(f"{name!r} holds no text, only whitespace")
    published = front_matter_date(text) if fmt == pb.DOCUMENT_FORMAT_MARKDOWN else None
    return Parsed(text, markdown.parse(text, fmt), {"encoding": encoding}, published)


def _parse_pdf(name: str, data: bytes) -> Parsed:
    """A PDF is checked before any reader sees it (safety/pdf_checks.py, ADR 0053)."""
    check_pdf(name, data)
    return read_pdf(name, data)


class IngestService:
    def __init__(
        self,
        sessions: sessionmaker,
        max_upload_bytes: int,
        delete_chunks: Callable[[str], int],
    ) -> None:
        self._sessions = sessions
        self._max_upload_bytes = max_upload_bytes
        self._delete_chunks = delete_chunks

    def _check_size(self, name: str, size: int) -> None:
        if size > self._max_upload_bytes:
            raise ResourceExhausted(
                f"{name!r} is {size / 1e6:.1f} MB, over the upload limit of "
                f"{self._max_upload_bytes / 1e6:.1f} MB (CHUNKLAB_MAX_UPLOAD_MB)"
            )

    def _receive(self, name: str, declared_size: int, pieces: Iterable[bytes]) -> bytes:
        """The upload's bytes, each data message at most limits.PIECE_BYTES, never more than
        the declared size (when one is declared) and, at the end, exactly it."""
        buffer = bytearray()
        for number, piece in enumerate(pieces, start=1):
            if len(piece) > limits.PIECE_BYTES:
                raise InvalidArgument(
                    f"data message {number} of {name!r} holds {len(piece):,} bytes; the contract allows at most "
                    f"{limits.PIECE_BYTES:,} (1 MiB) per message: send the file in smaller pieces"
                )
            buffer += piece
            self._check_size(name, len(buffer))
            if declared_size and len(buffer) > declared_size:
                raise InvalidArgument(
                    f"the upload header declares {name!r} as {declared_size:,} bytes, but more arrived; "
                    "declare the file's real size (or 0 when it is not known) and send it again"
                )
        if not buffer:
            raise InvalidArgument(f"{name!r} is empty: there is nothing to ingest")
        if declared_size and len(buffer) != declared_size:
            raise InvalidArgument(
                f"the upload header declares {name!r} as {declared_size:,} bytes, but {len(buffer):,} arrived: "
                "the upload was cut short; send the whole file again"
            )
        return bytes(buffer)

    def create(
        self,
        header_name: str,
        declared_format: int,
        collection: str,
        language: str,
        published_at: datetime | None,
        declared_size: int,
        pieces: Iterable[bytes],
    ) -> tuple[pb.Document, bool]:
        name = display_name(header_name)
        fmt = resolve_format(name, declared_format)
        collection = collection.strip() or "default"
        limits.check_collection(collection)  # the retriever's own rule: it filters and sweeps by collection
        language = check_language(language)
        if declared_size < 0:
            raise InvalidArgument(
                f"the upload header declares {name!r} as {declared_size:,} bytes; give its size in bytes, or 0 "
                "when it is not known"
            )
        self._check_size(name, declared_size)
        data = self._receive(name, declared_size, pieces)
        content_hash = hashlib.sha256(data).hexdigest()

        with self._sessions() as session:
            existing = session.scalar(
                select(DocumentRow).where(
                    DocumentRow.collection == collection, DocumentRow.content_hash == content_hash
                )
            )
            if existing is not None:
                return self._to_proto(existing, pb.DOCUMENT_VIEW_BASIC), True

        parsed = parse_upload(name, fmt, data)
        # The binary check samples the head of a file; its rest may still hold U+0000.
        limits.check_no_nul(parsed.text, repr(name))
        check_no_surrogates(parsed.text, name)
        metadata = dict(parsed.metadata)
        report = build_report(fmt, parsed.tree, metadata, parsed.warnings)  # notes of a loss leave the metadata
        now = utcnow()
        row = DocumentRow(
            document_id=str(uuid.uuid4()),
            name=name,
            format=fmt,
            collection=collection,
            language=language or parsed.language or detect_language(parsed.text),
            published_at=published_at or parsed.published_at or now,
            ingested_at=now,
            size_bytes=len(data),
            content_hash=content_hash,
            character_count=len(parsed.text),
            extra=metadata,
            text=parsed.text,
            tree=parsed.tree.SerializeToString(),
            parse_report=report.SerializeToString(),
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError:
            # A concurrent upload of the same bytes won the race.
            with self._sessions() as session:
                existing = session.scalar(
                    select(DocumentRow).where(
                        DocumentRow.collection == collection, DocumentRow.content_hash == content_hash
                    )
                )
                return self._to_proto(existing, pb.DOCUMENT_VIEW_BASIC), True
        return self._to_proto(row, pb.DOCUMENT_VIEW_BASIC), False

    def get(self, document_id: str, view: int) -> pb.Document:
        if not document_id:
            raise InvalidArgument("document_id is empty")
        with self._sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None:
                raise NotFound(f"no document {document_id!r}; list the documents to see their ids")
            return self._to_proto(row, view)

    def list(self, page_size: int, page_token: str, collection: str, language: str):
        size = check_page_size(page_size)
        offset = decode_offset(page_token)
        query = select(DocumentRow)
        if collection:
            limits.check_collection(collection)  # no document is stored under any other name
            query = query.where(DocumentRow.collection == collection)
        language = check_language(language, "the language filter")
        if language:
            query = query.where(DocumentRow.language == language)
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(query.subquery()))
            rows = session.scalars(
                query.order_by(DocumentRow.ingested_at.desc(), DocumentRow.document_id).offset(offset).limit(size)
            ).all()
            documents = [self._to_proto(r, pb.DOCUMENT_VIEW_BASIC) for r in rows]
        next_token = encode_token(offset + size) if offset + size < total else ""
        return documents, next_token, total

    def delete(self, document_id: str) -> int:
        self.get(document_id, pb.DOCUMENT_VIEW_BASIC)  # NOT_FOUND before touching the index
        # The index first: if the retriever is down nothing is deleted and the
        # caller can try again; a row without chunks is harmless, chunks
        # without a row would be orphans.
        deleted = self._delete_chunks(document_id)
        with self._sessions.begin() as session:
            row = session.get(DocumentRow, document_id)
            if row is not None:
                session.delete(row)
        return deleted

    @staticmethod
    def _to_proto(row: DocumentRow, view: int) -> pb.Document:
        doc = pb.Document(
            document_id=row.document_id,
            name=row.name,
            format=row.format,
            collection=row.collection,
            language=row.language,
            published_at=to_proto(row.published_at),
            ingested_at=to_proto(row.ingested_at),
            size_bytes=row.size_bytes,
            content_hash=row.content_hash,
            character_count=row.character_count,
            metadata=row.extra or {},
        )
        doc.parse_report.ParseFromString(row.parse_report or b"")
        if view == pb.DOCUMENT_VIEW_FULL:
            doc.text = row.text
            doc.tree.ParseFromString(row.tree)
        return doc
