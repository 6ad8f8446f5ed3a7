"""PDF uploads checked before any reader sees them (ADR 0053): files that are
not PDFs, truncated or damaged ones, encrypted ones, absurd page and object
counts, and streams that inflate past the limits (judged by what they inflate
to, a piece at a time, by the same code as a DOCX's zip members) are refused
with a sentence a person can act on, and nothing is stored; a normal PDF, a
2,000-page one and one whose content compresses 500 to 1 pass. Every file is
written here byte by byte, or by pypdf's writer for encryption."""

from __future__ import annotations

import base64
import io
import tracemalloc
import zlib

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf._codecs._codecs import LzwCodec

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.safety import pdf_filters
from services.ingest.safety.inflate import PIECE_BYTES
from services.ingest.safety.pdf_checks import PdfLimits, check_pdf
from tests.support.hand_pdfs import (
    CATALOG,
    MB,
    bomb_pdf,
    flate,
    one_page_with,
    pdf_bytes,
    stream,
    text_pdf,
    zeros_deflated,
)
from tests.support.ingest import create, rows

# -- PDFs written by hand -------------------------------------------------------


@pytest.fixture(scope="module")
def gigabyte() -> bytes:
    """A deflated GiB of zeros: about 1 MB."""
    return zeros_deflated(1024)


def encrypted(user_password: str, algorithm: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf(2))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def refused(error: type, data: bytes, limits: PdfLimits = PdfLimits(), name: str = "upload.pdf") -> str:
    with pytest.raises(error) as caught:
        check_pdf(name, data, limits)
    return caught.value.message


# -- accepted -----------------------------------------------------------------


def test_a_normal_pdf_passes_and_its_reader_is_handed_on():
    reader = check_pdf("handbook.pdf", text_pdf(3))
    assert len(reader.pages) == 3
    assert reader.pages[1].extract_text() == "Page 2 of the handbook."


def test_a_2000_page_manual_passes():
    assert len(check_pdf("manual.pdf", text_pdf(2000)).pages) == 2000


def test_content_that_compresses_500_to_1_is_not_a_bomb():
    content = b"BT /F1 12 Tf 72 720 Td " + b"(Ha! ) Tj " * 500_000 + b"ET"
    data = one_page_with(flate(content))
    assert len(content) / len(zlib.compress(content)) > 500
    assert len(check_pdf("laughter.pdf", data).pages) == 1


# -- not a PDF, truncated, damaged ----------------------------------------------


@pytest.mark.parametrize(
    "data, what",
    [
        (b"Quarterly report\n\nSales rose.", "it does not start with %PDF-"),
        (b"PK\x03\x04" + bytes(100), "its content is a zip archive (a DOCX, XLSX or similar)"),
    ],
    ids=["text", "zip"],
)
def test_a_file_that_is_not_a_pdf_is_refused(data, what):
    assert refused(InvalidArgument, data, name="report.pdf") == (
        f"'report.pdf' is declared as PDF but is not a PDF file ({what}); "
        "upload it with its real extension, or export it again as PDF"
    )


def test_a_truncated_pdf_is_refused():
    data = text_pdf(3)
    assert refused(InvalidArgument, data[: len(data) // 2], name="cut.pdf") == (
        "'cut.pdf' is a truncated PDF: it does not end with %%EOF as a complete PDF does "
        "(was a download or copy cut short?); download or export it again"
    )


def test_a_pdf_padded_after_its_end_is_read_not_refused_as_truncated():
    # A writer that pads files to a block's size (pypdf's selenium-pypdf-issue-177.pdf: 20 kB of NULs).
    assert check_pdf("padded.pdf", text_pdf(2) + bytes(20_480)) is not None


def test_a_pdf_without_cross_reference_or_trailer_is_refused_in_words_not_the_parser_s():
    data = text_pdf(3)
    damaged = data[: data.index(b"xref")] + b"%%EOF\n"
    # pypdf says "PdfReadError: startxref not found": the log has it, the person reads what it means.
    assert refused(InvalidArgument, damaged, name="broken.pdf") == (
        "'broken.pdf' is a damaged PDF that cannot be read: its cross-reference table, which says where "
        "each part of the file is, is missing (the file may be truncated or edited by hand); "
        "open it in a PDF viewer and save or export it again as PDF"
    )


def test_a_pdf_whose_cross_reference_table_is_damaged_says_so():
    data = text_pdf(3)
    damaged = data.replace(b"xref\n0", b"xrXf\n0")
    message = refused(InvalidArgument, damaged, name="broken.pdf")
    assert message.startswith("'broken.pdf' is a damaged PDF that cannot be read: its cross-reference table")
    assert "PdfReadError" not in message and "xref" not in message


@pytest.mark.parametrize(
    "pages, message",
    [
        (b"<< /Type /Pages /Kids [] /Count 0 >>", "'upload.pdf' has no pages: there is nothing to read in it"),
        (
            b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
            "'upload.pdf' is a damaged PDF: its page tree reaches the same node twice (a loop or a shared branch, "
            "which no PDF writer makes); open it in a PDF viewer and save or export it again as PDF",
        ),
    ],
    ids=["no pages", "a loop"],
)
def test_a_page_tree_with_no_pages_or_a_loop_is_refused(pages, message):
    assert refused(InvalidArgument, pdf_bytes([CATALOG, pages])) == message


def test_a_page_tree_whose_branches_share_a_node_is_refused():
    # 40 levels, each node's two kids the same node: 2**40 pages for a reader that follows both.
    levels = [b"<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count 2 >>" % (3 + i, 3 + i) for i in range(40)]
    message = refused(InvalidArgument, pdf_bytes([CATALOG, *levels, b"<< /Type /Page >>"]))
    assert "its page tree reaches the same node twice (a loop or a shared branch" in message


# -- encrypted ------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["RC4-40", "AES-256"])
def test_a_password_protected_pdf_is_refused(algorithm):
    assert refused(InvalidArgument, encrypted("open-sesame", algorithm), name="locked.pdf") == (
        "'locked.pdf' is password-protected; remove the password (open it with the password, then save a "
        "copy without security) and upload again"
    )


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-256"])
def test_a_pdf_that_opens_without_a_password_but_is_encrypted_is_refused(algorithm):
    assert refused(InvalidArgument, encrypted("", algorithm), name="restricted.pdf") == (
        "'restricted.pdf' is encrypted: it opens without a password, but its author restricted it (an owner "
        "password on copying or printing); save a copy without security (in your PDF editor, or by "
        "printing it to a new PDF) and upload that"
    )


def test_a_pdf_encrypted_for_certificates_is_refused():
    data = encrypted("open-sesame", "RC4-128").replace(b"/Filter /Standard", b"/Filter /Adobe.PubSec")
    assert refused(InvalidArgument, data, name="signed.pdf") == (
        "'signed.pdf' is encrypted in a way that cannot be opened here; save a copy without security and upload that"
    )


# -- page and object counts -------------------------------------------------------


@pytest.mark.parametrize("count", [100_000, 10**12])
def test_an_absurd_declared_page_count_is_refused(count):
    pages = b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count
    assert refused(ResourceExhausted, pdf_bytes([CATALOG, pages, b"<< /Type /Page /Parent 2 0 R >>"])) == (
        f"'upload.pdf' declares {count:,} pages; a PDF with more than 10,000 pages is refused: "
        "split it into smaller PDFs"
    )


@pytest.mark.parametrize(
    "leaf, declared, detail",
    [
        (b"<< /Type /Page /Parent 2 0 R >>", 60, ""),
        # Leaves without /Type (a reader takes any node without /Kids for a page) hide from the count of
        # the bytes, and the page tree's walk finds them.
        (b"<< /Parent 2 0 R >>", 3, " (its page tree declares 3)"),
    ],
    ids=["written out", "behind a count that lies"],
)
def test_pages_past_the_limit_are_refused(leaf, declared, detail):
    pages = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (3 + i) for i in range(60)), declared)
    data = pdf_bytes([CATALOG, pages] + [leaf] * 60)
    assert refused(ResourceExhausted, data, PdfLimits(max_pages=50)) == (
        f"'upload.pdf' holds more than 50 pages{detail}; a PDF with more than 50 pages is refused: "
        "split it into smaller PDFs"
    )


def test_a_page_tree_of_empty_branches_is_bounded():
    chain = [b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % (3 + i) for i in range(30)]
    data = pdf_bytes([CATALOG, *chain, b"<< /Type /Page >>"])
    assert refused(ResourceExhausted, data, PdfLimits(max_pages=10)) == (
        "'upload.pdf' has a page tree of more than 20 entries; a PDF with more than 10 pages is refused: "
        "split it into smaller PDFs"
    )


def test_more_objects_than_the_limit_are_refused_before_they_are_parsed():
    data = one_page_with(*[b"null"] * 1500)
    assert refused(ResourceExhausted, data, PdfLimits(max_objects=1000)) == (
        "'upload.pdf' holds more than 1,000 objects; a PDF with more is refused: split it into smaller PDFs"
    )


def test_an_object_stream_that_packs_millions_of_objects_is_refused():
    packed = stream(zlib.compress(b"6 0 " + b"null"), b"/Type /ObjStm /N 10000000 /First 4 /Filter /FlateDecode ")
    assert refused(ResourceExhausted, one_page_with(packed)) == (
        "'upload.pdf' holds more than 200,000 objects; a PDF with more is refused: split it into smaller PDFs"
    )


@pytest.mark.parametrize("where", ["trailer", "cross-reference stream"])
def test_a_declared_object_count_past_the_limit_is_refused(where):
    if where == "trailer":
        data = one_page_with().replace(b"/Size 4", b"/Size 1000000000")
    else:
        data = one_page_with(stream(b"", b"/Type /XRef /Size 1000000000 /W [1 2 1] "))
    assert refused(ResourceExhausted, data) == (
        "'upload.pdf' declares 1,000,000,000 objects in its cross-reference table; a PDF with more than "
        "200,000 is refused: split it into smaller PDFs"
    )


# -- decompression bombs ------------------------------------------------------


def test_a_stream_that_inflates_to_a_gigabyte_is_refused_in_bounded_memory(gigabyte, service):
    data = bomb_pdf(gigabyte)
    assert len(data) < 2 * MB  # well inside the upload limit: only what it inflates to gives it away
    tracemalloc.start()
    try:
        message = refused(ResourceExhausted, data, name="bomb.pdf")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == (
        "'bomb.pdf' is refused as a decompression bomb: the stream of object 4 inflates to more than 100 MB "
        "(the limit for one stream inside a PDF)"
    )
    assert peak < 8 * PIECE_BYTES
    with pytest.raises(ResourceExhausted, match="decompression bomb"):
        create(service, "bomb.pdf", data)
    assert rows(service) == 0


@pytest.mark.parametrize(
    "entries",
    [
        b"/Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter /FlateDecode ",
        b"/Filter 9 0 R ",
        b"/Filter [/ASCIIHexDecode /FlateDecode] ",
    ],
    ids=["labelled an image", "filter by reference", "hex, then flate"],
)
def test_a_bomb_is_refused_however_its_stream_is_labelled(entries):
    deflated = zeros_deflated(8)
    if b"ASCIIHex" in entries:
        deflated = deflated.hex().encode() + b">"
    data = one_page_with(stream(deflated, entries))
    assert refused(ResourceExhausted, data, PdfLimits(max_stream_bytes=5_000_000)) == (
        "'upload.pdf' is refused as a decompression bomb: the stream of object 4 inflates to more than 5 MB "
        "(the limit for one stream inside a PDF)"
    )


def test_a_stream_compressed_twice_is_judged_by_what_its_last_layer_inflates_to(gigabyte):
    twice = stream(zlib.compress(gigabyte), b"/Filter [/FlateDecode /FlateDecode] ")
    assert refused(ResourceExhausted, one_page_with(twice)).endswith(
        "the stream of object 4 inflates to more than 100 MB (the limit for one stream inside a PDF)"
    )


def test_streams_that_pass_the_limit_together_are_refused():
    data = one_page_with(*[stream(zeros_deflated(3), b"/Filter /FlateDecode ")] * 4)
    limits = PdfLimits(max_stream_bytes=5_000_000, max_total_bytes=10_000_000)
    assert refused(ResourceExhausted, data, limits) == (
        "'upload.pdf' is refused as a decompression bomb: it inflates to more than 10 MB in all (the limit for a PDF)"
    )


def test_run_length_bombs_are_refused():
    runs = bytes([129, 0]) * 50_000  # each pair is 128 zero bytes: 6.4 MB
    data = one_page_with(stream(runs, b"/Filter /RunLengthDecode "))
    assert "the stream of object 4 inflates to more than 5 MB" in refused(
        ResourceExhausted, data, PdfLimits(max_stream_bytes=5_000_000)
    )


def test_an_image_codec_is_never_decoded_so_its_bytes_count_as_they_stand(gigabyte):
    jpeg_labelled = stream(gigabyte, b"/Subtype /Image /Filter /DCTDecode ")
    assert len(check_pdf("photo.pdf", one_page_with(jpeg_labelled)).pages) == 1


# -- the filters' decoders ---------------------------------------------------------


def test_the_decoders_give_back_what_was_encoded_across_piece_boundaries():
    original = bytes(range(256)) * 40 + b"abc" * 30_000 + bytes(5000)
    lzw = LzwCodec().encode(original)
    assert b"".join(pdf_filters.lzw(lzw[i : i + 999] for i in range(0, len(lzw), 999))) == original
    runs = [bytes([2]) + b"ab", b"c" + bytes([253]) + b"z" + bytes([128])]  # 3 literal bytes, "z" 4 times, the end
    assert b"".join(pdf_filters.run_length(runs)) == b"abczzzz"
    assert b"".join(pdf_filters.ascii_hex([b"61 6", b"2 63 7>"])) == b"abcp"
    a85 = base64.a85encode(original[:999]) + b"~>"
    assert b"".join(pdf_filters.ascii85([a85[:501], a85[501:-1], a85[-1:]])) == original[:999]
