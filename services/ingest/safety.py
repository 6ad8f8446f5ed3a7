"""Checks that run before any parser sees an upload.

A DOCX is a zip of XML. Before python-docx opens one we check the archive
itself (readable, not a bomb: member count, total uncompressed size and
compression ratio capped, with the real decompressed bytes counted, not the
sizes the archive claims), that it is a Word document, and that none of its
XML declares a DOCTYPE or entities.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass

from chunklab.errors import InvalidArgument, ResourceExhausted

ZIP_MAGIC = b"PK\x03\x04"
_DOCTYPE = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_DOCTYPE_UTF16 = [p.encode(enc) for p in ("<!DOCTYPE", "<!ENTITY") for enc in ("utf-16-le", "utf-16-be")]


@dataclass(frozen=True)
class ZipLimits:
    max_members: int = 2000
    max_total_bytes: int = 500_000_000
    max_ratio: float = 200.0


def check_docx_archive(name: str, data: bytes, limits: ZipLimits = ZipLimits()) -> None:
    """Raises InvalidArgument or ResourceExhausted; returns when the archive is safe to parse."""
    if not data.startswith(ZIP_MAGIC):
        raise InvalidArgument(
            f"{name!r} is declared as DOCX but is not a DOCX file (a DOCX is a zip archive); "
            "save it from Word as .docx, or upload it with its real extension"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise InvalidArgument(f"{name!r} is a corrupt or truncated zip archive ({exc}); save it again") from None
    if len(members) > limits.max_members:
        raise ResourceExhausted(
            f"{name!r} holds {len(members)} files; a DOCX with more than {limits.max_members} is refused"
        )
    names = {m.filename for m in members}
    if "[Content_Types].xml" not in names or "word/document.xml" not in names:
        raise InvalidArgument(f"{name!r} is a zip archive but not a Word document (no word/document.xml)")
    declared = sum(m.file_size for m in members)
    if declared > limits.max_total_bytes:
        raise ResourceExhausted(
            f"{name!r} would unpack to {declared / 1e6:.0f} MB, over the {limits.max_total_bytes / 1e6:.0f} MB limit"
        )
    budget = limits.max_total_bytes
    for member in members:
        if member.compress_size and member.file_size / member.compress_size > limits.max_ratio:
            raise ResourceExhausted(
                f"{name!r} looks like a zip bomb: {member.filename} is compressed "
                f"{member.file_size / member.compress_size:.0f} to 1 (limit {limits.max_ratio:.0f})"
            )
        try:
            with archive.open(member) as stream:
                # Read at most one byte more than the budget: sizes in the
                # archive's directory can lie, the decompressed bytes cannot.
                content = stream.read(budget + 1)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
            raise InvalidArgument(f"{name!r} is a corrupt zip archive: {member.filename} cannot be read ({exc})") from None
        budget -= len(content)
        if budget < 0:
            raise ResourceExhausted(
                f"{name!r} unpacks to more than {limits.max_total_bytes / 1e6:.0f} MB; refused as a zip bomb"
            )
        if member.filename.endswith((".xml", ".rels")) and _declares_doctype(content):
            raise InvalidArgument(
                f"{name!r} is refused: {member.filename} declares a DOCTYPE or entities, "
                "which Word never writes and which can be used to attack XML parsers"
            )


def _declares_doctype(content: bytes) -> bool:
    return bool(_DOCTYPE.search(content)) or any(p in content for p in _DOCTYPE_UTF16)
