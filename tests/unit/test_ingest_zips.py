"""DOCX uploads judged by what they unpack to (ADR 0049): a legitimate document
that compresses hundreds to one is read; zip bombs (a member that inflates past
the limit, overlapping entries, lying sizes), billion laughs and external
entities are refused with a sentence a person can act on, in bounded memory,
and nothing is stored. Every file is built here."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile

import docx
import pytest

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.safety.docx_checks import (
    PIECE_BYTES,
    ZipLimits,
    check_docx_archive,
)
from tests.support.ingest import create, docx_bytes, handbook, rows, zip_bytes

MB = 1_000_000
_CENTRAL = b"PK\x01\x02"


def handbook_members() -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(docx_bytes(handbook)))
    return {name: archive.read(name) for name in archive.namelist()}


def with_zeros(members: dict[str, bytes], name: str, size: int) -> bytes:
    """The members and one more of `size` zero bytes, deflated as it is written (never whole in memory)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for member, content in members.items():
            archive.writestr(member, content)
        with archive.open(name, "w", force_zip64=True) as stream:
            zeros = bytes(MB)
            for _ in range(size // MB):
                stream.write(zeros)
    return buffer.getvalue()


def central_offset(data: bytes, member: str) -> int:
    """Where the member's record in the central directory starts."""
    offset = data.find(_CENTRAL)
    while offset >= 0:
        name_length = struct.unpack_from("<H", data, offset + 28)[0]
        if data[offset + 46 : offset + 46 + name_length].decode() == member:
            return offset
        offset = data.find(_CENTRAL, offset + 1)
    raise AssertionError(f"{member} is not in the archive")


def local_offset(data: bytes, member: str) -> int:
    return zipfile.ZipFile(io.BytesIO(data)).getinfo(member).header_offset


def patched(data: bytes, *edits: tuple[int, str, int]) -> bytes:
    """The archive with struct fields overwritten: (offset, format, value)."""
    out = bytearray(data)
    for offset, fmt, value in edits:
        struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def refused(service, name: str, data: bytes, error: type, message: str) -> str:
    with pytest.raises(error, match=message) as caught:
        create(service, name, data)
    assert rows(service) == 0
    return caught.value.message


# -- accepted ---------------------------------------------------------------


def test_one_long_paragraph_that_compresses_over_600_to_1_is_read(service):
    paragraph = "Ha! " * 1_000_000
    document = docx.Document()
    document.add_paragraph(paragraph)
    buffer = io.BytesIO()
    document.save(buffer)
    data = buffer.getvalue()
    body = zipfile.ZipFile(io.BytesIO(data)).getinfo("word/document.xml")
    assert body.file_size / body.compress_size > 616

    stored, existed = create(service, "laughter.docx", data)
    assert not existed
    assert stored.character_count == len(paragraph.strip())
    assert rows(service) == 1


def test_an_archive_inside_is_counted_by_its_own_size_and_never_unpacked(service):
    inner = with_zeros({}, "zeros.bin", 300 * MB)  # unpacked it would be 300 MB
    data = zip_bytes(handbook_members() | {"word/embeddings/package.zip": inner})
    stored, _ = create(service, "embedded.docx", data)
    assert stored.character_count > 0 and rows(service) == 1


# -- zip bombs --------------------------------------------------------------


def test_a_member_that_inflates_past_the_limit_is_refused_in_bounded_memory(service):
    data = with_zeros(handbook_members(), "word/media/image1.png", 120 * MB)
    assert len(data) < 2 * MB  # well inside the upload limit: only what it unpacks to gives it away
    tracemalloc.start()
    try:
        with pytest.raises(ResourceExhausted) as caught:
            check_docx_archive("bomb.docx", data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.message == (
        "'bomb.docx' is refused as a zip bomb: word/media/image1.png unpacks to more than 100 MB "
        "(the limit for one file inside a DOCX)"
    )
    assert peak < 8 * PIECE_BYTES
    refused(service, "bomb.docx", data, ResourceExhausted, "unpacks to more than 100 MB")


def test_members_that_pass_the_limit_together_are_refused():
    members = handbook_members() | {f"word/media/part{i}.bin": bytes(4 * MB) for i in range(3)}
    with pytest.raises(ResourceExhausted) as caught:
        check_docx_archive(
            "parts.docx", zip_bytes(members), ZipLimits(max_member_bytes=5 * MB, max_total_bytes=10 * MB)
        )
    assert caught.value.message == (
        "'parts.docx' is refused as a zip bomb: it unpacks to more than 10 MB in all (the limit for a DOCX)"
    )


def test_a_size_that_lies_small_is_refused_as_corrupt(service):
    data = with_zeros(handbook_members(), "word/media/image1.png", 20 * MB)
    central, local = central_offset(data, "word/media/image1.png"), local_offset(data, "word/media/image1.png")
    # The directory and the entry both claim 1,000 bytes; the stream inflates to 20 MB.
    liar = patched(data, (central + 24, "<L", 1000), (local + 22, "<L", 1000))
    message = refused(service, "liar.docx", liar, InvalidArgument, "corrupt zip archive")
    assert message.startswith("'liar.docx' is a corrupt zip archive: word/media/image1.png cannot be read (")
    assert message.endswith("; save it again")


def test_entries_whose_bytes_overlap_are_refused(service):
    members = handbook_members()
    data = zip_bytes(members, zipfile.ZIP_STORED)
    first = "[Content_Types].xml"
    local = local_offset(data, first)
    end_of_data = local_offset(data, "word/document.xml") + len(members["word/document.xml"]) + 100
    stretch = end_of_data - local - 30 - len(first)
    # The first entry's stored bytes now run over the next entries, as in a non-recursive zip bomb.
    overlapping = patched(
        data, (central_offset(data, first) + 20, "<L", stretch), (central_offset(data, first) + 24, "<L", stretch)
    )
    message = refused(service, "overlap.docx", overlapping, InvalidArgument, "overlap")
    assert message.startswith(f"'overlap.docx' is refused as a zip bomb: the stored bytes of {first} and ")
    assert message.endswith("overlap, so the same data would be unpacked twice; Word never writes such an archive")


def test_a_name_held_twice_is_refused(service):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in handbook_members().items():
            archive.writestr(name, content)
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("word/document.xml", b"<other/>")
    refused(
        service,
        "twice.docx",
        buffer.getvalue(),
        InvalidArgument,
        "holds word/document.xml twice, which Word never writes",
    )


def test_more_members_than_the_limit_are_refused_before_they_are_listed():
    members = {"[Content_Types].xml": b"<x/>", "word/document.xml": b"<w/>"} | {f"f{i}": b"" for i in range(30)}
    with pytest.raises(ResourceExhausted) as caught:
        check_docx_archive("many.docx", zip_bytes(members), ZipLimits(max_members=20))
    assert caught.value.message == "'many.docx' holds 32 files; a DOCX with more than 20 is refused"


def test_a_directory_too_big_for_its_stated_count_is_refused_before_it_is_listed():
    members = {"[Content_Types].xml": b"<x/>", "word/document.xml": b"<w/>"}
    members |= {f"word/media/{i:02d}-" + "n" * 800: b"" for i in range(30)}
    data = zip_bytes(members)
    end = data.rfind(b"PK\x05\x06")
    # The end record claims 2 files; the directory it points to lists 32 with long names (26 kB).
    understated = patched(data, (end + 8, "<H", 2), (end + 10, "<H", 2))
    with pytest.raises(ResourceExhausted) as caught:
        check_docx_archive("long.docx", understated, ZipLimits(max_members=20))
    assert caught.value.message == (
        "'long.docx' lists more files than a DOCX may hold: its directory is 26 kB, over 20 kB for 20 files"
    )


def test_an_encrypted_member_is_refused_with_what_to_do(service):
    data = zip_bytes(handbook_members())
    member = "word/document.xml"
    flags_central, flags_local = central_offset(data, member) + 8, local_offset(data, member) + 6
    encrypted = patched(data, (flags_central, "<H", 1), (flags_local, "<H", 1))
    refused(
        service,
        "locked.docx",
        encrypted,
        InvalidArgument,
        "word/document.xml cannot be read .it is encrypted: save the document without a password.",
    )


# -- XML attacks --------------------------------------------------------------


def with_document_xml(prefix: str, at_offset: int = 0) -> bytes:
    """The handbook with `prefix` before its document body's root, after `at_offset` bytes of padding."""
    members = handbook_members()
    declaration, rest = members["word/document.xml"].decode("utf-8").split("?>", 1)
    padding = " " * max(0, at_offset - len(declaration) - 2)
    members["word/document.xml"] = (declaration + "?>" + padding + prefix + rest).encode("utf-8")
    return zip_bytes(members)


BILLION_LAUGHS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    + "]>"
)
XXE = '<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'


@pytest.mark.parametrize(
    "prefix, at_offset",
    [(BILLION_LAUGHS, 0), (XXE, 0), (XXE, PIECE_BYTES - 4)],
    ids=["billion laughs", "external entity", "cut by a piece boundary"],
)
def test_doctype_and_entities_are_refused(service, prefix, at_offset):
    message = refused(service, "evil.docx", with_document_xml(prefix, at_offset), InvalidArgument, "DOCTYPE")
    assert message == (
        "'evil.docx' is refused: word/document.xml declares a DOCTYPE or entities, "
        "which Word never writes and which can be used to attack XML parsers"
    )
