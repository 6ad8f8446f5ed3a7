"""The layout of a PDF's pages: text lines with their font, ruled tables,
page furniture and reading order (ADR 0054).

pypdfium2 (PDFium) gives the characters, with PDFium's own line breaks, in
content-stream order; one font look-up per line keeps it fast. Tables come
from pdfplumber's table finder, asked only about pages whose paths draw
rules at enough positions to make a grid (it parses a page 40-75x slower
than PDFium).
Coordinates here are top-down: `top` grows down the page, as a reader reads.
"""

from __future__ import annotations

import ctypes
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from services.ingest.readers.pdf_aligned import find_aligned
from services.ingest.readers.pdf_bidi import logical_text
from services.ingest.readers.pdf_tables import Drawing, TableBox, find_tables, survey

log = logging.getLogger(__name__)

# Running headers and footers: among the first or last lines of a page, the
# ones that recur (digits aside, at one height) on this many pages or more.
_FURNITURE_LINES = 2
_FURNITURE_PAGES = 3
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$|^[-\u2013]\s*\d+\s*[-\u2013]$", re.I)
_LIGATURES = re.compile("[\ufb00-\ufb06]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\uffff]")
# PDFium joins a line that ends in a hyphen to the next one, marking the
# place with U+FFFE; the reader decides whether the hyphen stays.
LINE_HYPHEN = "\ufffe"


@dataclass
class Line:
    """One line of text as PDFium broke it, with the size of its first
    character's font; bold when its first and last characters are.

    `top` is the ascent above the first character's baseline, `bottom` the
    last character's baseline: they differ by more than a line where PDFium
    joined hyphenated lines (LINE_HYPHEN)."""

    text: str
    page: int  # from 1
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    region: str = ""  # a figure's or a footnote's, read apart from the body (pdf_order)


@dataclass
class Page:
    number: int  # from 1
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    tables: list[TableBox] = field(default_factory=list)
    images: int = 0
    tables_skipped: str = ""  # why the table finder could not read this page
    drawing: Drawing = field(default_factory=Drawing)  # rules, images, figures (pdf_tables)


def _clean(text: str) -> str:
    """PDFium's text of a line, with ligatures spelled out and control
    characters (PDFium marks a soft hyphen as U+0002) made plain."""
    text = text.replace("\x02", "-").replace("\u00ad", "-")
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    return _CONTROL.sub(" ", text).strip()


class _Fonts:
    """A line's font size and boldness, asked of PDFium once per line."""

    def __init__(self) -> None:
        self._name = ctypes.create_string_buffer(128)
        self._flags = ctypes.c_int()

    def of(self, textpage, index: int) -> tuple[float, bool]:
        size = pdfium_c.FPDFText_GetFontSize(textpage, index)
        pdfium_c.FPDFText_GetFontInfo(textpage, index, self._name, len(self._name), self._flags)
        name = self._name.value.decode("latin-1").lower()
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        bold = weight >= 600 or any(word in name for word in ("bold", "black", "heavy", "semibold"))
        return round(size, 1), bold


def _page_lines(page, number: int, height: float, fonts: _Fonts) -> list[Line]:
    textpage = page.get_textpage()
    raw = textpage.raw
    text = logical_text(raw, textpage.get_text_range())
    lines = []
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    origin_x, origin_y = ctypes.c_double(), ctypes.c_double()
    position = 0
    for piece in text.split("\r\n"):
        begin, position = position, position + len(piece) + 2
        stripped = piece.strip()
        cleaned = _clean(stripped)
        if not cleaned:
            continue
        lead = len(piece) - len(piece.lstrip())
        first = pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw, begin + lead)
        last = pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw, begin + lead + len(stripped) - 1)
        if first < 0 or last < 0:
            continue
        pdfium_c.FPDFText_GetCharBox(raw, first, left, right, bottom, top)
        x0 = left.value
        pdfium_c.FPDFText_GetCharBox(raw, last, left, right, bottom, top)
        pdfium_c.FPDFText_GetCharOrigin(raw, first, origin_x, origin_y)
        first_baseline = height - origin_y.value
        pdfium_c.FPDFText_GetCharOrigin(raw, last, origin_x, origin_y)
        size, bold = fonts.of(raw, first)
        bold = bold and fonts.of(raw, last)[1]  # a bold lead-in does not make a bold line
        lines.append(Line(cleaned, number, x0, right.value, first_baseline - size, height - origin_y.value, size, bold))
    textpage.close()
    return lines


def read_pages(document: pdfium.PdfDocument, data: bytes) -> list[Page]:
    """Every page's lines and ruled tables; lines inside a table are the table's."""
    fonts = _Fonts()
    pages, ruled_pages = [], []
    for index in range(len(document)):
        pdf_page = document[index]
        width, height = pdf_page.get_size()
        page = Page(index + 1, width, height, _page_lines(pdf_page, index + 1, height, fonts))
        page.drawing = survey(pdf_page, height)
        page.images = len(page.drawing.images)
        if page.drawing.grid and page.lines:
            ruled_pages.append(page)
        pages.append(page)
        pdf_page.close()
    if ruled_pages:
        find_tables(ruled_pages, document, data)
    find_aligned(document, pages)
    return pages


def _furniture_key(line: Line) -> tuple[str, int]:
    """A line's text with its digits as `#`, and its height on the page to 5 pt."""
    return re.sub(r"\d+", "#", " ".join(line.text.lower().split())), int(line.top // 5)


def remove_furniture(pages: list[Page]) -> None:
    """Drops running headers, footers and page numbers. Among each page's
    first and last few lines: those at the same height and no larger than the
    body text whose text, digits aside, recurs on three pages or more (a
    header that names its chapter recurs within the chapter); bare page
    numbers there on any page."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += len(line.text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    edges: list[list[Line]] = []
    counts: Counter[tuple[str, int]] = Counter()
    for page in pages:
        ordered = sorted(page.lines, key=lambda ln: ln.top)
        edge = ordered[:_FURNITURE_LINES] + ordered[-_FURNITURE_LINES:] if len(ordered) > 1 else ordered
        edge = [ln for ln in edge if ln.size <= body + 0.5]
        edges.append(edge)
        counts.update({_furniture_key(ln) for ln in edge})
    for page, edge in zip(pages, edges):
        furniture = {
            id(ln) for ln in edge if _PAGE_NUMBER.match(ln.text) or counts[_furniture_key(ln)] >= _FURNITURE_PAGES
        }
        page.lines = [ln for ln in page.lines if id(ln) not in furniture]
