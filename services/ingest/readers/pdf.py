"""PDF into canonical text and a DocumentTree (ADR 0054).

The canonical text follows DOCX's rules (ADR 0007): a Markdown rendering,
headings as `#` lines, paragraphs re-flowed into one line each, list items
as `- ` / `1. ` lines, ruled tables as Markdown tables, blocks separated by
a blank line. Headings come from the outline (bookmarks) when the PDF has
one, otherwise from font size and weight. Running headers, footers and page
numbers are left out (services.ingest.readers.pdf_layout). Every node carries the
pages its range touches and the tree the offset where each page begins.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

import pypdfium2 as pdfium

from chunklab.errors import InvalidArgument
from chunklab.text.pages import PAGE_COUNT_KEY, page_span
from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.markdown import Parsed, Writer, build_tree, markdown_table
from services.ingest.readers.pdf_headings import Headings, _Heading, combined_headings, outline
from services.ingest.readers.pdf_layout import (
    LINE_HYPHEN,
    Line,
    Page,
    TableBox,
    read_pages,
    remove_furniture,
)
from services.ingest.readers.pdf_order import reading_order

_INFO_FIELDS = ("Title", "Author", "Subject", "Keywords", "Creator", "Producer")
_PDF_DATE = re.compile(r"^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(?:([Z+\-])(\d{2})?'?(\d{2})?)?")
_BULLET = re.compile(r"^[\u2022\u00b7\u25aa\u2023\u25e6\u2013*-]\s+(?=\S)")
_NUMBERED = re.compile(r"^(\d{1,3})[.)]\s+(?=\S)")
# Any item marker a hanging indent follows: "a)", "(b)", "iv.", "2.", "•".
_ITEM = re.compile(r"^(?:\(?(?:\d{1,3}|[a-z]|[ivx]{1,5})[.)]|[\u2022\u00b7\u25aa\u2023\u25e6\u2013*-])\s")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_TERMINAL = (".", "!", "?", ":", ";")
# A table-of-contents line: dot leaders, then a page number.
_LEADERS = re.compile(r"(?:\.\s?){4,}\s*\d+$")


def pdf_date(value: str) -> datetime | None:
    """A PDF date string ("D:20240131120000+01'00'") as an aware datetime."""
    match = _PDF_DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, sign, tz_hours, tz_minutes = match.groups()
    offset = timedelta(hours=int(tz_hours or 0), minutes=int(tz_minutes or 0))
    zone = timezone(-offset if sign == "-" else offset) if sign in ("+", "-") else UTC
    try:
        return datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=zone
        )
    except ValueError:
        return None


def _gap(previous: Line, line: Line) -> float:
    """Baseline to baseline, from the last of `previous` to the first of `line`."""
    return line.top + line.size - previous.bottom


def _fragment(line: Line, beside: Line) -> bool:
    """A superscript or subscript PDFium put on a line of its own ("n" of R^n):
    a few characters, smaller than the line beside it."""
    return len(line.text) <= 4 and line.size < beside.size * 0.85


class _Joiner:
    """Joins a paragraph's lines into one: a word hyphenated across a line
    break is rejoined ("exam-" + "ple"), unless the document itself spells the
    pair with a hyphen and never without, or the continuation is not lower
    case ("COVID-" + "19", "Franco-" + "German")."""

    def __init__(self, lines: list[Line]) -> None:
        self.hyphenated: set[str] = set()
        self.words: set[str] = set()
        for line in lines:
            for word in _WORD.findall(line.text.lower()):
                (self.hyphenated if "-" in word else self.words).add(word)

    def join(self, text: str, more: str) -> tuple[str, int]:
        """(joined text, offset where `more` begins in it)."""
        if len(text) > 1 and text.endswith("-") and text[-2].isalpha():
            head = _WORD.findall(text[:-1])[-1].split("-")[-1].lower()
            tail_words = _WORD.findall(more)
            tail = tail_words[0].split("-")[0] if tail_words and more.startswith(tail_words[0]) else ""
            if tail and tail[0].islower():
                joined = head + tail.lower()
                if f"{head}-{tail.lower()}" in self.hyphenated and joined not in self.words:
                    return text + more, len(text)
                return text[:-1] + more, len(text) - 1
            return text + more, len(text)
        if text.endswith(("\u2014", "/")):
            return text + more, len(text)
        return f"{text} {more}", len(text) + 1


class _Renderer:
    """Writes the reading-ordered items as blocks and notes where each page starts."""

    def __init__(self, items: list[Line | TableBox], headings: Headings) -> None:
        self.items, self.headings = items, headings
        self.writer = Writer()
        self.page_first: dict[int, int] = {}
        self.joiner = _Joiner([it for it in items if isinstance(it, Line)])
        # Line pitch over font size, the commonest in the document: a larger
        # gap between lines ends a paragraph.
        pitches = Counter(
            round(_gap(a, b) / a.size, 2)
            for a, b in zip(items, items[1:])
            if isinstance(a, Line) and isinstance(b, Line) and a.page == b.page and a.size == b.size and _gap(a, b) > 0
        )
        # Where most paragraphs are one line, the commonest pitch is the gap
        # between paragraphs: no leading is above 1.5 times the size.
        self.pitch_ratio = min(1.5, pitches.most_common(1)[0][0]) if pitches else 1.2
        self.list_format = ""

    def _mark(self, page: int, offset: int) -> None:
        self.page_first.setdefault(page, offset)

    def _continues(self, run: list[Line], line: Line) -> bool:
        """Whether `line` goes on the paragraph (or code listing) that `run` holds."""
        previous = run[-1]
        if previous.region != line.region:  # a figure's labels, a footnote: apart from the body (pdf_order)
            return False
        if _fragment(line, previous) or (len(run) > 1 and _fragment(previous, run[-2])):
            return line.page == previous.page and abs(_gap(previous, line)) < 2 * max(line.size, previous.size)
        same_place = line.page == previous.page and _gap(previous, line) > 0
        if previous.mono or line.mono:  # a listing's lines stay together, and apart from prose
            return previous.mono and line.mono and same_place and _gap(previous, line) <= line.size * 2.5
        if (
            abs(previous.size - line.size) > 0.5
            or _BULLET.match(line.text)
            or _NUMBERED.match(line.text)
            or _LEADERS.search(previous.text)
        ):
            return False
        if not same_place:  # a new page or column
            return not previous.text.endswith(_TERMINAL)
        if _gap(previous, line) > line.size * self.pitch_ratio * 1.25 + 0.5:
            return False
        return not self._starts_paragraph(run, line)

    @staticmethod
    def _starts_paragraph(run: list[Line], line: Line) -> bool:
        """A paragraph opens without extra space where its first line is indented
        past the run's left edge (by up to six em: more is centring or a
        figure), or where the line before ended a sentence well short of
        where this one ends. A list item's hanging lines are not indents, nor the
        line after a first one whose sentence it goes on with (the first wrapped
        where no sentence ends, a small letter starts this one, not a list's
        "a)"), nor the lines that follow where that one is: the paragraph hangs, as
        reference lists, glossaries and clauses set theirs."""
        previous = run[-1]
        hanging = (
            len(run) == 1
            and not previous.text.endswith(_TERMINAL)
            and previous.x1 >= line.x1 - line.size  # wrapped: "Definition 1" above its text is not
            and line.text[:1].islower()
            and not _ITEM.match(line.text)
        )
        if not _ITEM.match(run[0].text) and not hanging:
            left = min(ln.x0 for ln in run)
            if len(run) > 1 and min(ln.x0 for ln in run[1:]) - left > line.size * 0.8:
                left = min(ln.x0 for ln in run[1:])  # a hanging paragraph's lines go on where its second is
            if line.size * 0.8 < line.x0 - left < line.size * 6:
                return True
        return previous.text.endswith(_TERMINAL) and previous.x1 < line.x1 - 3 * line.size

    def _flush(self, run: list[Line]) -> None:
        if not run:
            return
        if run[0].mono:
            self._code(run)
            return
        text, offsets = "", []
        for line in run:
            pieces = line.text.split(LINE_HYPHEN)
            if text:
                text, at = self.joiner.join(text, pieces[0])
            else:
                text, at = pieces[0], 0
            offsets.append(at)
            for piece in pieces[1:]:
                text = self.joiner.join(text + "-", piece)[0]
        bullet, numbered = _BULLET.match(text), _NUMBERED.match(text)
        if bullet or numbered:
            # The item's own number stays; any bullet becomes "-".
            fmt, marker = ("number", f"{numbered.group(1)}.") if numbered else ("bullet", "-")
            cut = (bullet or numbered).end()
            self.writer.list_item(text[cut:], marker, fmt == self.list_format)
            start = self.writer.blocks[-1].items[-1][0]
            offsets = [0] + [o - cut + len(marker) + 1 for o in offsets[1:]]
            self.list_format = fmt
        else:
            self.writer.paragraph(text)
            start = self.writer.blocks[-1].start
            self.list_format = ""
        for line, offset in zip(run, offsets):
            self._mark(line.page, start + offset)

    def _code(self, run: list[Line]) -> None:
        """A listing in a monospaced font as a fenced block: its lines as drawn,
        each indented by its offset from the leftmost in character widths."""
        widths = [(ln.x1 - ln.x0) / len(ln.text) for ln in run if len(ln.text) > 1]
        width = sorted(widths)[len(widths) // 2] if widths else run[0].size * 0.6
        left = min(ln.x0 for ln in run)
        texts = [" " * max(0, round((ln.x0 - left) / width)) + ln.text.replace(LINE_HYPHEN, "-") for ln in run]
        self.writer.code("\n".join(texts))
        block = self.writer.blocks[-1]
        offset = block.start + self.writer.parts[-1].index("\n") + 1
        for line, text in zip(run, texts):
            self._mark(line.page, offset)
            offset += len(text) + 1
        self.list_format = ""

    def render(self) -> Writer:
        run: list[Line] = []
        for item in self.items:
            opened = self.headings.before.get(id(item), [])
            if opened:
                self._flush(run)
                run = []
                for heading in opened:
                    self._heading(heading)
            if isinstance(item, TableBox):
                self._flush(run)
                run = []
                lines = markdown_table(item.rows)
                if lines:
                    self.writer.table(lines)
                    self._mark(item.page, self.writer.blocks[-1].start)
                    self.list_format = ""
                continue
            if id(item) in self.headings.at:
                self._flush(run)
                run = []
                heading = self.headings.at[id(item)]
                if heading is not None:
                    self._heading(heading)
                continue
            if run and not self._continues(run, item):
                self._flush(run)
                run = []
            run.append(item)
        self._flush(run)
        return self.writer

    def _heading(self, heading: _Heading) -> None:
        self.writer.heading(heading.level, heading.title)
        self._mark(heading.page, self.writer.blocks[-1].start)
        self.list_format = ""


def _page_starts(page_first: dict[int, int], pages: int, length: int) -> list[int]:
    """Offset where each page begins; a page without text begins where the next one does."""
    starts, following = [0] * pages, length
    for number in range(pages, 0, -1):
        following = page_first.get(number, following)
        starts[number - 1] = following
    if starts:
        starts[0] = 0
    return starts


def _stamp_pages(node: pb.TreeNode, page_starts: list[int]) -> None:
    node.first_page, node.last_page = page_span(page_starts, node.start_char, node.end_char)
    for child in node.children:
        _stamp_pages(child, page_starts)


# What PDFium raises on a file it cannot open (a damaged cross-reference
# table, a truncated file), and what a broken outline or font can raise.
log = logging.getLogger(__name__)

_UNREADABLE = (pdfium.PdfiumError, KeyError, ValueError, TypeError, IndexError, AttributeError)


def read_pdf(name: str, data: bytes) -> Parsed:
    """The PDF's canonical text, tree (pages on every node) and metadata, or
    a refusal: unreadable, or no text on any page (scanned: needs OCR)."""
    try:
        document = pdfium.PdfDocument(data)
        try:
            pages = read_pages(document, data)
            entries = outline(document, pages)
            info = document.get_metadata_dict(skip_empty=True)
        finally:
            document.close()
    except _UNREADABLE as exc:
        log.info("%r is not a readable PDF: %s: %s", name, type(exc).__name__, str(exc)[:500])
        raise InvalidArgument(
            f"{name!r} is not a readable PDF (the PDF reader could not parse it; the ingest log says where); "
            "open it in a PDF viewer and save or print it again as PDF"
        ) from None
    remove_furniture(pages)
    items = [item for page in pages for item in reading_order(page)]
    if not items:
        images = sum(p.images for p in pages)
        held = (
            f"{images} image(s) and no text, so it looks scanned"
            if images
            else "no text, only drawings, so it looks scanned or its text was turned into outlines"
        )
        raise InvalidArgument(
            f"{name!r} has no text layer: its {len(pages)} page(s) hold {held}; "
            "it needs OCR: run it through an OCR tool (e.g. ocrmypdf) and upload the result"
        )
    headings = combined_headings(items, entries)
    renderer = _Renderer(items, headings)
    writer = renderer.render()
    text = writer.text()
    tree = build_tree(text, writer.blocks)
    tree.page_starts.extend(_page_starts(renderer.page_first, len(pages), len(text)))
    _stamp_pages(tree.root, list(tree.page_starts))
    metadata = {key.lower(): " ".join(info[key].split()) for key in _INFO_FIELDS if info.get(key, "").strip()}
    metadata[PAGE_COUNT_KEY] = str(len(pages))
    skipped = [f"p. {p.number} ({p.tables_skipped})" for p in pages if p.tables_skipped]
    if skipped:
        metadata["tables_not_read"] = "; ".join(skipped)[:500]
    return Parsed(text, tree, metadata, pdf_date(info.get("CreationDate", "")), warnings=_warnings(pages))


def _warnings(pages: list[Page]) -> list[str]:
    """What a person should know the reading could not give: pages without a
    text layer (scanned pages in an otherwise digital document)."""
    empty = [p.number for p in pages if not p.lines and not p.tables]
    if not empty:
        return []
    listed = ", ".join(str(n) for n in empty[:20]) + (", ..." if len(empty) > 20 else "")
    scanned = sum(1 for p in pages if p.number in set(empty) and p.images)
    why = "scanned? Run them through OCR (e.g. ocrmypdf)" if scanned else "blank, or drawings only"
    noun = "page has" if len(empty) == 1 else "pages have"
    return [f"{len(empty)} {noun} no text (p. {listed}): {why}"]
