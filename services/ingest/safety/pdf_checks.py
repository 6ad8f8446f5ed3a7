"""Checks that run before any PDF reader sees an upload (ADR 0053).

A PDF is judged by its bytes first, then by its structure:
- It starts with `%PDF-` (within its first kB, as readers allow) and ends
  with `%%EOF` (within its last kB, as Acrobat requires): else it is not a PDF,
  or it was cut off.
- Objects are counted in its body and in its object streams, and the counts
  its cross-reference sections declare are bounded too, before a parser
  builds a record of each.
- Every stream is decoded through its own filters, a piece at a time, and the
  file refused by what the streams inflate to: per stream and in all, the rule
  and the limits of a DOCX's zip members (`inflate.py`). No ratio refuses it.
  A label is not trusted: streams that call themselves images are decoded
  too, since a page can use any stream as its contents.
- Then pypdf opens it. Encrypted PDFs are refused, also those that open with
  an empty password: their streams are ciphertext, so the inflation check
  cannot judge them, and their author restricted them. The page tree is walked
  once, each node at most once, and its declared and found pages are bounded.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from pypdf import PdfReader
from pypdf.errors import LimitReachedError, PyPdfError
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.readers.decoding import looks_like
from services.ingest.safety.inflate import MAX_PART_BYTES, MAX_TOTAL_BYTES, PIECE_BYTES, Budget, Container
from services.ingest.safety.pdf_filters import DECODERS

log = logging.getLogger(__name__)

_PDF = Container(kind="PDF", bomb="a decompression bomb", verb="inflates", unit="stream inside a PDF")
# Readers accept the header within the first kB and the end marker within the last.
_EDGE_BYTES = 1024
_PADDING = b"\x00 \t\r\n\x0c"  # what may follow %%EOF: NUL padding and white space
_PADDED_TAIL = 1 << 20  # how far from the file's end %%EOF is looked for past padding (not a copy of it all)
# A stream's dictionary is looked for this far before its `stream` keyword.
_DICT_WINDOW = 1 << 16
_OBJECT_NUMBER = re.compile(rb"(\d+)\s+\d+\s*$")
_STREAM = re.compile(rb"(?<![A-Za-z])stream(?:\r\n|\n|\r)")
_ENDSTREAM_AT = re.compile(rb"\s*endstream")
_TRAILER = re.compile(rb"trailer\s*<<")
_LENGTH = re.compile(rb"/Length\s+(\d+)\b(?!\s+\d+\s+R)")
_FILTER = re.compile(rb"/Filter\s*(\[[^\]]*\]|/[^\s/\[\]<>()]+)?")
_NAME = re.compile(rb"/([^\s/\[\]<>()]+)")
_OBJECT_STREAM = re.compile(rb"/Type\s*/ObjStm\b")
_XREF_STREAM = re.compile(rb"/Type\s*/XRef\b")
_COUNT_IN_STREAM = re.compile(rb"/N\s+(\d+)")
_SIZE = re.compile(rb"/Size\s+(\d+)")
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z0-9])")
_ENCRYPT = re.compile(rb"/Encrypt\s*(?:\d+\s+\d+\s+R|<<)")
# What pypdf raises on a file it cannot make sense of, beside its own errors.
_UNREADABLE = (
    PyPdfError,
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    RecursionError,
    OSError,
    EOFError,
    ArithmeticError,
)


@dataclass(frozen=True)
class PdfLimits:
    max_pages: int = 10_000
    max_objects: int = 200_000
    max_stream_bytes: int = MAX_PART_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES


def check_pdf(name: str, data: bytes, limits: PdfLimits = PdfLimits()) -> PdfReader:
    """Raises InvalidArgument or ResourceExhausted; returns when the PDF is safe to parse.

    Returns the pypdf reader it opened, so that a reader built on pypdf need
    not parse the file a second time (opening costs about 30 µs an object)."""
    _check_edges(name, data)
    # Every object starts with `N G obj` and should end with `endobj`: counted
    # at C speed, and adding `endobj`s hides no object (the larger count holds).
    endobjs = data.count(b"endobj")
    body_objects = max(endobjs, data.count(b"obj") - endobjs)
    _check_object_count(name, body_objects, limits)
    # Pages written out in the body are counted before pypdf reads the cross-reference table of each.
    if sum(1 for _ in islice(_PAGE.finditer(data), limits.max_pages + 1)) > limits.max_pages:
        raise _too_many_pages(name, limits)
    declared = _check_streams(name, data, body_objects, limits)
    for trailer in _TRAILER.finditer(data):
        window = data[trailer.end() : trailer.end() + _EDGE_BYTES * 4]
        if size := _SIZE.search(window):
            declared = max(declared, int(size.group(1)))
    if declared > limits.max_objects:
        raise ResourceExhausted(
            f"{name!r} declares {declared:,} objects in its cross-reference table; a PDF with more than "
            f"{limits.max_objects:,} is refused: split it into smaller PDFs"
        )
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            _refuse_encrypted(name, data)
        _check_pages(name, reader, limits)
        return reader
    except NotImplementedError as exc:
        if not _ENCRYPT.search(data):
            raise _damaged(name, exc) from None
        log.info("%r: pypdf cannot open its encryption: %s", name, str(exc)[:500])
        raise InvalidArgument(
            f"{name!r} is encrypted in a way that cannot be opened here; save a copy without security and upload that"
        ) from None
    except LimitReachedError as exc:
        log.info("%r passes a limit of pypdf: %s", name, str(exc)[:500])
        raise ResourceExhausted(
            f"{name!r} is refused: it passes a limit of the PDF parser (its size, nesting or number of objects); "
            "split it into smaller PDFs"
        ) from None
    except _UNREADABLE as exc:
        raise _damaged(name, exc) from None


# What a few of pypdf's refusals mean, said for a person: (words pypdf's text holds, what is wrong).
# Its own text goes to the log only (ADR 0079); a refusal not listed is said in general words.
_DAMAGE = (
    (
        "startxref",
        "its cross-reference table, which says where each part of the file is, is missing "
        "(the file may be truncated or edited by hand)",
    ),
    ("xref", "its cross-reference table, which says where each part of the file is, is damaged"),
    ("trailer", "its trailer, which says where the document starts, is missing or damaged"),
)


def _damaged(name: str, exc: Exception) -> InvalidArgument:
    log.info("%r is a damaged PDF: %s: %s", name, type(exc).__name__, str(exc)[:500])
    # Its text is read (compared), never passed on.
    what = next((meaning for words, meaning in _DAMAGE if words in str(exc).lower()), "")
    return InvalidArgument(
        f"{name!r} is a damaged PDF that cannot be read"
        + (f": {what}" if what else " (the ingest log says where)")
        + "; open it in a PDF viewer and save or export it again as PDF"
    )


def _check_edges(name: str, data: bytes) -> None:
    if b"%PDF-" not in data[:_EDGE_BYTES]:
        what = looks_like(data)
        raise InvalidArgument(
            f"{name!r} is declared as PDF but is not a PDF file ("
            + (f"its content is {what}" if what else "it does not start with %PDF-")
            + "); upload it with its real extension, or export it again as PDF"
        )
    # Some writers pad a file after its end (NUL bytes to a block's size): read past the padding.
    if b"%%EOF" not in data[-_PADDED_TAIL:].rstrip(_PADDING)[-_EDGE_BYTES:]:
        raise InvalidArgument(
            f"{name!r} is a truncated PDF: it does not end with %%EOF as a complete PDF does "
            "(was a download or copy cut short?); download or export it again"
        )


def _check_object_count(name: str, count: int, limits: PdfLimits) -> None:
    if count > limits.max_objects:
        raise ResourceExhausted(
            f"{name!r} holds more than {limits.max_objects:,} objects; a PDF with more is refused: "
            "split it into smaller PDFs"
        )


def _check_streams(name: str, data: bytes, body_objects: int, limits: PdfLimits) -> int:
    """Decodes every stream in bounded pieces and counts the objects packed in
    object streams; returns the largest object count a cross-reference stream declares."""
    budget = Budget(name, _PDF, limits.max_stream_bytes, limits.max_total_bytes)
    view = memoryview(data)
    packed = 0
    declared = 0
    endstream = -1
    for streams, keyword in enumerate(_STREAM.finditer(data), 1):
        _check_object_count(name, streams, limits)
        start = keyword.end()
        window_start = max(0, keyword.start() - _DICT_WINDOW)
        header = data.rfind(b"obj", window_start, keyword.start())
        dictionary = data[header + 3 if header >= 0 else window_start : keyword.start()]
        # The first `endstream` after the data, found once for all streams before it;
        # a /Length that reaches further is followed too, as a parser would.
        if endstream < start:
            endstream = data.find(b"endstream", start)
            endstream = len(data) if endstream < 0 else endstream
        end = endstream
        if (
            (length := _LENGTH.search(dictionary))
            and start + int(length.group(1)) <= len(data)
            and _ENDSTREAM_AT.match(data, start + int(length.group(1)))
        ):
            end = max(end, start + int(length.group(1)))
        if _OBJECT_STREAM.search(dictionary) and (count := _COUNT_IN_STREAM.search(dictionary)):
            packed += int(count.group(1))
            _check_object_count(name, body_objects + packed, limits)
        if _XREF_STREAM.search(dictionary) and (size := _SIZE.search(dictionary)):
            declared = max(declared, int(size.group(1)))
        part = _stream_name(data, header)
        for _ in _decoded(view[start:end], _filters(dictionary), budget, part):
            pass
    return declared


def _filters(dictionary: bytes) -> list[bytes] | None:
    """The stream's filter names in order; None when /Filter is not written out (an indirect reference)."""
    match = _FILTER.search(dictionary)
    if not match:
        return []
    if not match.group(1):
        return None
    return _NAME.findall(match.group(1))


def _decoded(raw: memoryview, filters: list[bytes] | None, budget: Budget, part: str) -> Iterator[bytes]:
    """The stream's bytes after each filter a reader decodes, every layer counted by the budget."""
    pieces: Iterator[bytes] = (raw[i : i + PIECE_BYTES] for i in range(0, len(raw), PIECE_BYTES))
    if filters is None:  # unknown filters: Flate is tried, as it costs nothing on other data
        filters = [b"FlateDecode"]
    decoded = False
    for name in filters:
        decoder = DECODERS.get(name)
        if decoder is None:  # an image codec: neither this check nor a text reader decodes it
            break
        pieces, decoded = budget.count(part, decoder(pieces)), True
    return pieces if decoded else budget.count(part, pieces)


def _stream_name(data: bytes, header: int) -> str:
    numbers = _OBJECT_NUMBER.search(data[max(0, header - 40) : header]) if header >= 0 else None
    return f"the stream of object {int(numbers.group(1))}" if numbers else "a stream"


def _refuse_encrypted(name: str, data: bytes) -> None:
    """Refuses an encrypted PDF, saying whether a viewer opens it without a password: whether
    PDFium, which reads our PDFs, does. pypdf's empty-password test is not that: it takes an
    empty owner password too, where a viewer asks for the user one (AES-256 files with a user
    password and no owner password were told they open without one)."""
    import pypdfium2 as pdfium

    try:
        pdfium.PdfDocument(data).close()
        opens_without_password = True
    except pdfium.PdfiumError:  # wrong password, or an encryption PDFium cannot open
        opens_without_password = False
    if opens_without_password:
        raise InvalidArgument(
            f"{name!r} is encrypted: it opens without a password, but its author restricted it (an owner "
            "password on copying or printing); save a copy without security (in your PDF editor, or by "
            "printing it to a new PDF) and upload that"
        )
    raise InvalidArgument(
        f"{name!r} is password-protected; remove the password (open it with the password, then save a "
        "copy without security) and upload again"
    )


def _check_pages(name: str, reader: PdfReader, limits: PdfLimits) -> None:
    """Walks the page tree once: every node at most once, at most twice as many
    nodes as the page limit, the pages it declares and holds within the limit."""
    root = reader.trailer.get("/Root")
    root = root.get_object() if root is not None else None
    tree = root.get("/Pages") if isinstance(root, DictionaryObject) else None
    node = tree.get_object() if tree is not None else None
    if not isinstance(node, DictionaryObject):
        raise InvalidArgument(
            f"{name!r} is a damaged PDF: it has no page tree; "
            "open it in a PDF viewer and save or export it again as PDF"
        )
    declared = node.get("/Count")
    if isinstance(declared, int) and declared > limits.max_pages:
        raise ResourceExhausted(
            f"{name!r} declares {declared:,} pages; a PDF with more than {limits.max_pages:,} pages is "
            "refused: split it into smaller PDFs"
        )
    pending: list[object] = [tree]
    seen: set[object] = set()
    pages = 0
    declared_text = f"{declared:,}" if isinstance(declared, int) else "no count"
    while pending:
        entry = pending.pop()
        key = (entry.idnum, entry.generation) if isinstance(entry, IndirectObject) else id(entry)
        if key in seen:
            raise InvalidArgument(
                f"{name!r} is a damaged PDF: its page tree reaches the same node twice (a loop or a shared branch, "
                "which no PDF writer makes); open it in a PDF viewer and save or export it again as PDF"
            )
        seen.add(key)
        if len(seen) > 2 * limits.max_pages:
            raise ResourceExhausted(
                f"{name!r} has a page tree of more than {2 * limits.max_pages:,} entries; a PDF with more "
                f"than {limits.max_pages:,} pages is refused: split it into smaller PDFs"
            )
        node = entry.get_object() if isinstance(entry, IndirectObject) else entry
        if not isinstance(node, DictionaryObject):
            continue  # a reader skips what is not a page
        kids = node.get("/Kids")
        kids = kids.get_object() if kids is not None else None
        if isinstance(kids, ArrayObject):
            pending.extend(kids)
            continue
        pages += 1
        if pages > limits.max_pages:
            raise _too_many_pages(name, limits, f" (its page tree declares {declared_text})")
    if pages == 0:
        raise InvalidArgument(f"{name!r} has no pages: there is nothing to read in it")


def _too_many_pages(name: str, limits: PdfLimits, declared: str = "") -> ResourceExhausted:
    return ResourceExhausted(
        f"{name!r} holds more than {limits.max_pages:,} pages{declared}; a PDF with more than "
        f"{limits.max_pages:,} pages is refused: split it into smaller PDFs"
    )
