"""Checks that run before any parser sees an upload.

A DOCX is a zip of XML, so it can be a zip bomb or an XML entity attack.
Before python-docx opens one, every member is unpacked once in bounded
pieces (never whole) and the archive is refused by what it unpacks to: the
bytes actually inflated per member and in all, and the number of members.
Compression ratio alone refuses nothing: a paragraph of repeated text
compresses 600 to 1 and is a fine document, while a bomb is caught by the
bytes it inflates to, whatever its directory claims (the rule and its limits
are `inflate.py`'s, shared with PDF streams). Archives whose entries
overlap (one stream unpacked under many names) or repeat a name are refused
for their structure, and no XML part may declare a DOCTYPE or entities
(billion laughs, external entities). Members that are archives themselves
(an embedded workbook) are never unpacked, so they count by their own size.
"""

from __future__ import annotations

import io
import logging
import re
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.safety.inflate import MAX_PART_BYTES, MAX_TOTAL_BYTES, PIECE_BYTES, Budget, Container, size_text

ZIP_MAGIC = b"PK\x03\x04"
log = logging.getLogger(__name__)

_DOCX = Container(kind="DOCX", bomb="a zip bomb", verb="unpacks", unit="file inside a DOCX")
_DOCTYPE = re.compile(rb"<!\s{0,16}(DOCTYPE|ENTITY)", re.IGNORECASE)
_DOCTYPE_UTF16 = [p.encode(enc) for p in ("<!DOCTYPE", "<!ENTITY") for enc in ("utf-16-le", "utf-16-be")]
# Bytes kept from the end of one piece so that a declaration cut in two by a piece boundary is still seen.
_OVERLAP = 64
# A member's entry in the archive's directory: 46 bytes and its name (Word's are
# under 100 characters); its extra fields add a few dozen bytes.
DIRECTORY_BYTES_PER_MEMBER = 1024
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_CORRUPT = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    struct.error,
)


@dataclass(frozen=True)
class ZipLimits:
    max_members: int = 2000
    max_member_bytes: int = MAX_PART_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES


def check_docx_archive(name: str, data: bytes, limits: ZipLimits = ZipLimits()) -> None:
    """Raises InvalidArgument or ResourceExhausted; returns when the archive is safe to parse."""
    if not data.startswith(ZIP_MAGIC):
        raise InvalidArgument(
            f"{name!r} is declared as DOCX but is not a DOCX file (a DOCX is a zip archive); "
            "save it from Word as .docx, or upload it with its real extension"
        )
    _check_directory(name, data, limits)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except _CORRUPT as exc:
        log.info("%r is a corrupt zip archive: %s: %s", name, type(exc).__name__, str(exc)[:500])
        raise InvalidArgument(
            f"{name!r} is a corrupt or truncated zip archive (its directory cannot be read); save it again"
        ) from None
    _check_member_count(name, len(members), limits)
    _check_names(name, members)
    _check_layout(name, data, members)
    budget = Budget(name, _DOCX, limits.max_member_bytes, limits.max_total_bytes)
    for member in members:
        scan = member.filename.endswith((".xml", ".rels"))
        tail = b""
        for piece in _unpack(name, archive, member, budget):
            if scan:
                window = tail + piece
                if _declares_doctype(window):
                    raise InvalidArgument(
                        f"{name!r} is refused: {member.filename} declares a DOCTYPE or entities, "
                        "which Word never writes and which can be used to attack XML parsers"
                    )
                tail = window[-_OVERLAP:]


def _unpack(name: str, archive: zipfile.ZipFile, member: zipfile.ZipInfo, budget: Budget) -> Iterator[bytes]:
    """The member's bytes as they inflate, a piece at a time, counted by the
    budget (the bytes count, not the sizes the directory claims)."""
    try:
        with archive.open(member) as stream:
            yield from budget.count(member.filename, iter(lambda: stream.read(PIECE_BYTES), b""))
    except ResourceExhausted:
        raise
    except _CORRUPT as exc:
        raise InvalidArgument(
            f"{name!r} is a corrupt zip archive: {member.filename} cannot be read ({_reason(exc)}); save it again"
        ) from None


def _check_directory(name: str, data: bytes, limits: ZipLimits) -> None:
    """Refuses too many members from the end-of-archive record, before zipfile
    builds a record of each (a 50 MB upload can list a million): by the count it
    states and by the directory's size, which bounds the count whatever it states."""
    try:
        end = zipfile._EndRecData(io.BytesIO(data))  # the stdlib's own reader of that record
    except _CORRUPT:
        end = None
    if not end:
        raise InvalidArgument(f"{name!r} is a corrupt or truncated zip archive (no end record); save it again")
    _check_member_count(name, end[zipfile._ECD_ENTRIES_TOTAL], limits)
    directory_bytes = end[zipfile._ECD_SIZE]
    if directory_bytes > limits.max_members * DIRECTORY_BYTES_PER_MEMBER:
        raise ResourceExhausted(
            f"{name!r} lists more files than a DOCX may hold: its directory is {size_text(directory_bytes)}, "
            f"over {size_text(limits.max_members * DIRECTORY_BYTES_PER_MEMBER)} for {limits.max_members} files"
        )


def _check_member_count(name: str, count: int, limits: ZipLimits) -> None:
    if count > limits.max_members:
        raise ResourceExhausted(f"{name!r} holds {count} files; a DOCX with more than {limits.max_members} is refused")


def _check_names(name: str, members: list[zipfile.ZipInfo]) -> None:
    seen: set[str] = set()
    for member in members:
        if member.filename in seen:
            raise InvalidArgument(
                f"{name!r} is refused: it holds {member.filename} twice, which Word never writes "
                "(a parser would read one copy and a check the other)"
            )
        seen.add(member.filename)
    if "[Content_Types].xml" not in seen or "word/document.xml" not in seen:
        raise InvalidArgument(f"{name!r} is a zip archive but not a Word document (no word/document.xml)")


def _check_layout(name: str, data: bytes, members: list[zipfile.ZipInfo]) -> None:
    """Refuses entries whose stored bytes overlap: the trick of a zip bomb that
    unpacks one compressed stream under many names."""
    spans = []
    for member in members:
        start = member.header_offset
        try:
            signature, *_, name_length, extra_length = _LOCAL_HEADER.unpack_from(data, start)
        except struct.error:
            signature = b""
        if signature != ZIP_MAGIC:
            raise InvalidArgument(
                f"{name!r} is a corrupt zip archive: {member.filename} points to no file entry; save it again"
            )
        spans.append(
            (start, start + _LOCAL_HEADER.size + name_length + extra_length + member.compress_size, member.filename)
        )
    spans.sort()
    for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
        if start < end:
            raise InvalidArgument(
                f"{name!r} is refused as a zip bomb: the stored bytes of {first} and {second} overlap, "
                "so the same data would be unpacked twice; Word never writes such an archive"
            )


def _declares_doctype(content: bytes) -> bool:
    return bool(_DOCTYPE.search(content)) or any(p in content for p in _DOCTYPE_UTF16)


def _reason(exc: Exception) -> str:
    """Why a member cannot be read, in our words; zipfile's own text goes to the log."""
    log.info("a zip member cannot be read: %s: %s", type(exc).__name__, str(exc)[:500])
    if "encrypted" in str(exc):
        return "it is encrypted: save the document without a password"
    if "compression" in str(exc).lower():
        return "it is compressed with a method Word does not use"
    return "its bytes do not match what the archive says of them"
