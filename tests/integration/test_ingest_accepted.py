"""Uploads the ingest once accepted although they were invalid (issue 31), each now refused with
what to do, or normalised as ADR 0124 says: a file name is a display name, the declared size is
what must arrive, a data message holds at most 1 MiB, text holds no lone surrogate, a language is
a code a document can carry. Each refusal leaves nothing stored."""

from __future__ import annotations

import pytest

from chunklab.errors import InvalidArgument
from chunklab.v1 import documents_pb2 as pb
from tests.support.ingest import create, ingest_service, rows

TEXT = b"# Trains\n\nThe night train leaves at ten.\n"


@pytest.fixture
def service(database_url, deleted):
    """The service on an empty database: each test runs on SQLite, then on PostgreSQL."""
    return ingest_service(database_url, deleted)


def upload(service, name: str, pieces: list[bytes], declared: int, language: str = ""):
    return service.create(name, pb.DOCUMENT_FORMAT_UNSPECIFIED, "", language, None, declared, iter(pieces))


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("../../x.md", "x.md"),
        ("notes/2024/../x.md", "x.md"),
        ("C:\\Users\\me\\Report (final) v2.md", "Report (final) v2.md"),
        ("Report (final) v2.md", "Report (final) v2.md"),
        ("tab\there.md", "tab here.md"),
    ],
)
def test_a_file_name_is_stored_and_listed_as_its_display_name(service, sent, shown):
    document, _ = create(service, sent, TEXT)
    assert document.name == shown
    listed, _, _ = service.list(0, "", "", "")
    assert [d.name for d in listed] == [shown]


@pytest.mark.parametrize("sent", ["..", "../", "docs/", "a\\.."])
def test_a_name_with_no_file_left_after_its_path_is_refused(service, sent):
    with pytest.raises(InvalidArgument, match="names no file: a name is shown, not a path"):
        create(service, sent, TEXT)
    assert rows(service) == 0


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (-1, "declares 'a.md' as -1 bytes; give its size in bytes, or 0 when it is not known"),
        (10, "declares 'a.md' as 10 bytes, but more arrived"),
        (len(TEXT) + 5, f"declares 'a.md' as {len(TEXT) + 5} bytes, but {len(TEXT)} arrived: the upload was cut"),
    ],
)
def test_a_declared_size_that_is_not_what_arrived_is_refused(service, declared, message):
    with pytest.raises(InvalidArgument, match=message):
        upload(service, "a.md", [TEXT[:10], TEXT[10:]], declared)
    assert rows(service) == 0


def test_the_declared_size_of_what_arrives_and_no_size_are_both_accepted(service):
    exact, _ = upload(service, "a.md", [TEXT[:10], TEXT[10:]], len(TEXT))
    unknown, _ = upload(service, "b.md", [TEXT + b"More."], 0)
    assert (exact.size_bytes, unknown.size_bytes) == (len(TEXT), len(TEXT) + 5)


def test_a_data_message_over_one_mib_is_refused_and_one_of_exactly_one_mib_is_read(service):
    big = b"word " * (2 * 1024 * 1024 // 5)
    with pytest.raises(InvalidArgument, match="data message 1 of 'big.md' holds 2,097,150 bytes; .* at most 1,048,576"):
        service._max_upload_bytes = 10_000_000
        upload(service, "big.md", [big], len(big))
    assert rows(service) == 0
    piece = b"a" * (1024 * 1024)
    document, _ = upload(service, "mib.md", [piece, b" end"], len(piece) + 4)
    assert document.size_bytes == len(piece) + 4


def test_a_surrogate_written_as_utf8_is_refused_not_read_as_another_code_page(service):
    data = "# Notes\n\nA lone \ud800 here.\n".encode("utf-8", "surrogatepass")
    with pytest.raises(
        InvalidArgument,
        match=r"'s.md' holds a surrogate code point .* at byte 16; that is not valid UTF-8 .*: save the file",
    ):
        create(service, "s.md", data)
    assert rows(service) == 0


@pytest.mark.parametrize("language", ["zz", "English", "not a language!", "en_", "xx-gb"])
def test_an_unknown_language_is_refused_with_the_accepted_codes(service, language):
    with pytest.raises(InvalidArgument) as refused:
        create(service, "a.md", TEXT, language=language)
    message = refused.value.message
    assert message.startswith(f"language {language!r} is not a language code; use an ISO 639-1 code")
    assert "Accepted codes: " in message and ", en, " in message and ", und, " in message
    assert rows(service) == 0


@pytest.mark.parametrize(
    ("given", "stored"), [("de", "de"), ("EN-GB", "en-gb"), ("zh_Hant", "zh-hant"), ("und", "und")]
)
def test_a_known_language_is_stored_as_its_code(service, given, stored):
    document, _ = create(service, "a.md", TEXT, language=given)
    assert document.language == stored
    listed, _, total = service.list(0, "", "", given)
    assert total == 1 and listed[0].document_id == document.document_id


@pytest.mark.parametrize(
    ("collection", "language", "message"),
    [
        ("", "not a language!", "the language filter 'not a language!' is not a language code"),
        ("", "zz", "the language filter 'zz' is not a language code"),
        ("../etc", "", "'../etc' is not a collection name"),
    ],
)
def test_a_list_filter_no_document_can_match_is_refused_not_answered_with_an_empty_page(
    service, collection, language, message
):
    create(service, "a.md", TEXT)
    with pytest.raises(InvalidArgument, match=message):
        service.list(0, "", collection, language)
