"""The layout of a PDF's pages: text lines with their font, and page
furniture (ADR 0054). Tables are found in `pdf_tables` (ruled, ADR 0097) and
`pdf_aligned` (without rules), right-to-left lines put in logical order by
`pdf_bidi` (ADR 0099), the reading order is `pdf_order`'s (ADR 0098).

pypdfium2 (PDFium) gives the characters, with PDFium's own line breaks, in
content-stream order; one font look-up per line keeps it fast.
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
from services.ingest.readers.pdf_turn import Turn, page_turn

log = logging.getLogger(__name__)

# Running headers and footers: among the first or last lines of a page, the
# ones that recur (digits aside, at one height) on this many pages or more.
_FURNITURE_LINES = 2
_FURNITURE_PAGES = 3
# A line that recurs at one height on this share of the pages, and on this many at least, is a
# running title whatever its size (the first kept).
_RUNNING_TITLE_SHARE = 1 / 3
_RUNNING_TITLE_PAGES = 5
# Bands of furniture peeled off a page's edges, one after another (remove_furniture).
_FURNITURE_PASSES = 3
# A page number in Roman numerals, 1 to 89, in small letters as front matter numbers its pages: a
# capital "X", "C" or "MD", or a word of such letters ("mix", "civil"), is text.
_ROMAN = r"(?=[ivxl])(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_PAGE_NUMBER = re.compile(
    rf"^(?:\d+|{_ROMAN}|(?i:page)\s+(?:\d+|(?i:{_ROMAN})))(?:\s*(?:/|(?i:of))\s*\d+)?$|^[-\u2013]\s*\d+\s*[-\u2013]$"
)
# A page number as a header or footer prints it: "7", "vii", "7-45" (chapter-page), "12/40".
_FOLIO = re.compile(rf"^(?:\d{{1,4}}|{_ROMAN}|\d{{1,3}}[-\u2013./]\d{{1,4}})$")
# A list item's box or bullet drawn from a symbol font: a C1 control code or a private-use
# character (Wingdings, Symbol), a geometric shape, a ballot box or a check mark, then a space.
_BOX = re.compile("^\\s*[\x80-\x9f\ue000-\uf8ff\u25a0-\u25ff\u2610-\u2612\u2713-\u2717\u2794\u27a2]\\s+(?=\\S)")
_LIGATURES = re.compile("[\ufb00-\ufb06]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\uffff]")
# PDFium joins a line that ends in a hyphen to the next one, marking the
# place with U+FFFE; the reader decides whether the hyphen stays.
LINE_HYPHEN = "\ufffe"


@dataclass
class Line:
    """One line of text as PDFium broke it, with the size it is drawn at,
    bold when its first and last characters are, monospaced when most are.

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
    mono: bool = False  # most of it in a monospaced font: code
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
    turned: int = 0  # degrees the page is turned to read its text (pdf_turn); width and height are turned
    drawing: Drawing = field(default_factory=Drawing)  # rules, images, figures (pdf_tables)


def _clean(text: str) -> str:
    """PDFium's text of a line, with ligatures spelled out, control
    characters (PDFium marks a soft hyphen as U+0002) made plain, and a
    leading box or symbol-font bullet made a bullet (a list item)."""
    text = text.replace("\x02", "-").replace("\u00ad", "-")
    text = _BOX.sub("\u2022 ", text, count=1)
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    return _CONTROL.sub(" ", text).strip()


class _Fonts:
    """A line's font size, weight and pitch, asked of PDFium for a few of its
    characters (never all: one look-up per character would cost more than the
    rest of the reading)."""

    _SAMPLES = 5

    def __init__(self) -> None:
        self._name = ctypes.create_string_buffer(128)
        self._flags = ctypes.c_int()
        self._matrix = pdfium_c.FS_MATRIX()

    def size(self, textpage, index: int) -> float:
        """The size the character is drawn at: the font size times the scale of
        its text and transformation matrices (many producers set the font at
        1 pt and scale the matrix, and FPDFText_GetFontSize ignores the matrix)."""
        size = pdfium_c.FPDFText_GetFontSize(textpage, index)
        if pdfium_c.FPDFText_GetMatrix(textpage, index, self._matrix):
            m = self._matrix
            size *= abs(m.a * m.d - m.b * m.c) ** 0.5
        return round(size, 1)

    def style(self, textpage, index: int) -> tuple[bool, bool]:
        """(bold, monospaced) of the character's font. Invisible text is never monospaced: it is
        the recognised text over a scan (OCR tools write it in a fixed-pitch font, Tesseract's
        GlyphLessFont or Courier), prose whatever its font says, and a code block only when drawn."""
        pdfium_c.FPDFText_GetFontInfo(textpage, index, self._name, len(self._name), self._flags)
        name = self._name.value.decode("latin-1").lower()
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        bold = weight >= 600 or any(word in name for word in ("bold", "black", "heavy", "semibold"))
        mono = bool(self._flags.value & 1) or any(word in name for word in _MONO_NAMES)
        return bold, mono and not _invisible(textpage, index)

    def of_line(self, textpage, first: int, last: int) -> tuple[float, bool, bool]:
        """(size, bold, monospaced) of the characters first..last: the commonest
        size among a few spread over the line (a bullet or a superscript does
        not set it); bold when the first and last letters are (a bold lead-in
        does not make a bold line); monospaced when most samples are."""
        count = last - first + 1
        step = max(1, count // self._SAMPLES)
        picks: list[int] = []
        for start in range(first, last + 1, step):  # the first letter at or after each spread position
            pick = next((i for i in range(start, min(start + step, last + 1)) if _is_letter(textpage, i)), None)
            if pick is not None:
                picks.append(pick)
        if not picks:
            picks = [first]
        sizes = Counter(self.size(textpage, i) for i in picks)
        size = max(sizes, key=lambda s: (sizes[s], s))
        styles = [self.style(textpage, i) for i in picks]
        bold = styles[0][0] and styles[-1][0]
        mono = sum(m for _, m in styles) * 2 > len(styles)
        return size, bold, mono


_MONO_NAMES = ("mono", "courier", "consol", "menlo", "typewriter", "cmtt", "sfmono", "inconsolata")


def _invisible(textpage, index: int) -> bool:
    """Whether the character is drawn invisibly (text render mode 3), as OCR tools write it."""
    text_object = pdfium_c.FPDFText_GetTextObject(textpage, index)
    return bool(text_object) and (
        pdfium_c.FPDFTextObj_GetTextRenderMode(text_object) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
    )


def _is_letter(textpage, index: int) -> bool:
    return chr(pdfium_c.FPDFText_GetUnicode(textpage, index) or 32).isalnum()


def _page_lines(page, number: int, fonts: _Fonts) -> tuple[list[Line], Turn]:
    """The page's lines, placed on the page turned to read them (pdf_turn), and that turn."""
    textpage = page.get_textpage()
    raw = textpage.raw
    turn = page_turn(raw, page)
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
        x0 = turn.box(left.value, bottom.value, right.value, top.value)[0]
        pdfium_c.FPDFText_GetCharBox(raw, last, left, right, bottom, top)
        x1 = turn.box(left.value, bottom.value, right.value, top.value)[2]
        pdfium_c.FPDFText_GetCharOrigin(raw, first, origin_x, origin_y)
        first_baseline = turn.point(origin_x.value, origin_y.value)[1]
        pdfium_c.FPDFText_GetCharOrigin(raw, last, origin_x, origin_y)
        last_baseline = turn.point(origin_x.value, origin_y.value)[1]
        size, bold, mono = fonts.of_line(raw, first, last)
        lines.append(Line(cleaned, number, x0, x1, first_baseline - size, last_baseline, size, bold, mono))
    textpage.close()
    return lines, turn


def read_pages(document: pdfium.PdfDocument, data: bytes) -> list[Page]:
    """Every page's lines and ruled tables; lines inside a table are the table's."""
    fonts = _Fonts()
    pages, ruled_pages = [], []
    for index in range(len(document)):
        pdf_page = document[index]
        lines, turn = _page_lines(pdf_page, index + 1, fonts)
        page = Page(index + 1, *turn.size, lines, turned=turn.angle)
        page.drawing = survey(pdf_page, turn)
        page.images = len(page.drawing.images)
        # The table finders read the page unturned: a turned page's tables stay text (ADR 0169).
        if page.drawing.grid and page.lines and not turn.angle:
            ruled_pages.append(page)
        pages.append(page)
        pdf_page.close()
    if ruled_pages:
        find_tables(ruled_pages, document, data)
    find_aligned(document, pages)
    return pages


def _furniture_key(line: Line, digits_aside: bool = True) -> tuple[str, int]:
    """A line's text with its digits as `#` (or as they are), and its height on the page to 5 pt."""
    text = " ".join(line.text.lower().split())
    return re.sub(r"\d+", "#", text) if digits_aside else text, int(line.top // 5)


def _numbered_edge(line: Line, neighbour: Line | None, body: float) -> bool:
    """A page's first or last line that is a running header or footer on its
    own, whatever the page count: short, no larger than the body text, carrying
    a page number at either end ("7-45", "example.org Chapter 3 7", "208 Global
    Report"), and set apart from the text next to it by more than two lines."""
    words = line.text.split()
    if not words or len(words) > 12 or line.size > body + 0.5 or line.mono:
        return False
    if not (_FOLIO.match(words[0]) or _FOLIO.match(words[-1])) or len(words) == 1 and not _PAGE_NUMBER.match(line.text):
        return False
    if neighbour is None:
        return True
    distance = line.top - neighbour.bottom if neighbour.top < line.top else neighbour.top - line.bottom
    return distance > 2 * line.size


def remove_furniture(pages: list[Page]) -> None:
    """Drops running headers, footers and page numbers, a band of them at a time: the lines
    next to the edge once it is gone are looked at again (a header of five lines: a print
    stamp, the guideline's version, its index link, its running title), _FURNITURE_PASSES
    times at most. Past the page's own edge only lines that recur as they are count. A band
    that would leave no text at all is the text, and stays."""
    for band in range(_FURNITURE_PASSES):
        kept = [page.lines for page in pages]
        # Past the edge, a line recurs as it is: "Definition 34" at a page's top is no "Page 34".
        _remove_edges(pages, digits_aside=band == 0)
        left = sum(len(page.lines) for page in pages)
        if not left:  # all of it recurs (a slide's one word on every page): it is the text
            for page, lines in zip(pages, kept):
                page.lines = lines
        if left in (0, sum(len(lines) for lines in kept)):
            return


def _remove_edges(pages: list[Page], digits_aside: bool) -> None:
    """Drops running headers, footers and page numbers at the pages' edges. Among each page's
    first and last few lines: those no larger than the body whose text, digits
    aside, recurs at the same height on three pages or more (a header that
    names its chapter recurs within the chapter), and short ones with a page
    number at one end on two pages or more (any size: a short document's
    headers); lines of any size there on a third of the pages or more, but the
    first (a running title larger than the text: its first is often the title);
    bare page numbers there on any page; and a first or last line with a page
    number at one end, set apart from the body (a one-page document's folio line)."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += len(line.text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    edges: list[list[Line]] = []
    counts: Counter[tuple[str, int]] = Counter()

    def key(line: Line) -> tuple[str, int]:
        return _furniture_key(line, digits_aside)

    for page in pages:
        ordered = sorted(page.lines, key=lambda ln: ln.top)
        edge = ordered[:_FURNITURE_LINES] + ordered[-_FURNITURE_LINES:] if len(ordered) > 1 else ordered
        edges.append(edge)
        counts.update({key(ln) for ln in edge})
    # A line of any size that runs over this many pages is a running title, kept where it first is.
    running = max(_RUNNING_TITLE_PAGES, len(pages) * _RUNNING_TITLE_SHARE)
    seen: set[tuple[str, int]] = set()
    for page, edge in zip(pages, edges):
        ordered = sorted(page.lines, key=lambda ln: ln.top)
        furniture = {
            id(ln)
            for ln in edge
            if (digits_aside and _PAGE_NUMBER.match(ln.text))
            or (counts[key(ln)] >= _FURNITURE_PAGES and ln.size <= body + 0.5)
            or (counts[key(ln)] >= 2 and _has_folio(ln) and len(ln.text.split()) <= 12)
            or (counts[key(ln)] >= running and key(ln) in seen)
        }
        seen.update(key(ln) for ln in edge)
        if ordered and digits_aside:  # the page's own edge: past it, a lone number is text (an exponent)
            first, last = ordered[0], ordered[-1]
            if _numbered_edge(first, ordered[1] if len(ordered) > 1 else None, body):
                furniture.add(id(first))
            if _numbered_edge(last, ordered[-2] if len(ordered) > 1 else None, body):
                furniture.add(id(last))
        page.lines = [ln for ln in page.lines if id(ln) not in furniture]


def _has_folio(line: Line) -> bool:
    words = line.text.split()
    return bool(words) and bool(_FOLIO.match(words[0]) or _FOLIO.match(words[-1]))
