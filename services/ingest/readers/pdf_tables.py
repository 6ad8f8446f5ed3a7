"""Ruled tables of a PDF page (ADRs 0054, 0097).

pdfplumber's table finder (its "lines" strategy) says where the cells are:
it is asked only about pages whose paths draw rules at enough positions to
make a grid. What is in a cell is read from PDFium's characters, not from
pdfminer's: PDFium maps glyphs that pdfminer leaves as "(cid:N)", keeps a
rotated header in the order it is written rather than top to bottom
("No Authority", not "ytirohtuA oN"), and every character inside the table
lands in some cell, so no text goes with a cell the finder thinks empty. A
letter drawn twice over itself (a bold effect) is read once.

A column the rules leave undivided is split where its text has a gap
between two columns of words in two rows or more. A grid is not a table
when it holds a drawing (curves or slanted lines inside it: a plot, a
syntax diagram) or when most of its cells are empty.
"""

from __future__ import annotations

import bisect
import ctypes
import io
import logging
import re
import unicodedata
from dataclasses import dataclass, field

import pypdfium2.raw as pdfium_c

from services.ingest.readers.pdf_turn import Turn

log = logging.getLogger(__name__)

# A ruled table of two rows draws rules at three y positions at least, and
# its frame at two x positions (its columns may be divided by space alone);
# a page with fewer never reaches the table finder.
GRID_RULES = 3
FRAME_SIDES = 2
_EDGE = 10.0  # points: an edge shorter than this is a tick or a mark, not a table's
RULE_WIDTH = 2.0  # points: a path this thin is a rule
# Comparisons of edges a page's grid test may make (_grid): a ruled table takes a few thousand.
GRID_CHECKS = 2_000_000
_LIGATURES = re.compile("[\ufb00-\ufb06]")
_SNAP = 1.0  # points: how far a glyph may stick out of its cell
_MARK = 6.0  # points: a curve this small is a bullet or a check mark, not a drawing
_OVERPRINT = 1.0  # points: the same letter this close to itself is drawn twice


@dataclass
class TableBox:
    page: int
    x0: float
    x1: float
    top: float
    bottom: float
    rows: list[list[str]]


@dataclass
class _Glyph:
    index: int  # in PDFium's text order
    char: str
    x0: float
    x1: float
    top: float
    bottom: float

    @property
    def middle(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.top + self.bottom) / 2


def glyphs_of(pdf_page, height: float) -> list[_Glyph]:
    """The page's characters in PDFium's text order, spaces as ' ' without a box."""
    textpage = pdf_page.get_textpage()
    raw = textpage.raw
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    glyphs = []
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        char = chr(pdfium_c.FPDFText_GetUnicode(raw, index) or 32)
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cs", "Cn") or char in "\ufffe\uffff":
            glyphs.append(_Glyph(index, " ", 0, 0, 0, 0))
            continue
        pdfium_c.FPDFText_GetCharBox(raw, index, left, right, bottom, top)
        glyphs.append(_Glyph(index, char, left.value, right.value, height - top.value, height - bottom.value))
    textpage.close()
    return glyphs


def cell_text(glyphs: list[_Glyph]) -> str:
    """A cell's characters in text order, a space where PDFium has one or
    skips over characters outside the cell; overprinted letters once."""
    out: list[str] = []
    last: _Glyph | None = None
    for glyph in glyphs:
        if glyph.char == " ":
            out.append(" ")
            continue
        if last is not None and glyph.index > last.index + 1 and out and out[-1] != " ":
            out.append(" ")
        if (
            last is not None
            and glyph.char == last.char
            and abs(glyph.x0 - last.x0) < _OVERPRINT
            and abs(glyph.top - last.top) < _OVERPRINT
        ):
            continue
        out.append(glyph.char)
        last = glyph
    text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), "".join(out))
    return " ".join(text.split())


def _column_edges(table, glyphs: list[_Glyph]) -> list[float]:
    """x of every column boundary: the rules' and, inside a column the rules
    leave whole, a gap that separates words in two rows or more."""
    edges = sorted({round(c[0], 1) for row in table.rows for c in row.cells if c} | {round(table.bbox[2], 1)})
    found = []
    for left, right in zip(edges, edges[1:]):
        rows: dict[int, list[tuple[float, float]]] = {}
        for r, row in enumerate(table.rows):
            top, bottom = row.bbox[1], row.bbox[3]
            for g in glyphs:
                x, y = g.middle
                if g.char != " " and left < x < right and top < y < bottom:
                    rows.setdefault(r, []).append((g.x0, g.x1))
        found.extend(_gaps(left, right, rows))
    return sorted(set(edges) | set(found))


def _gaps(left: float, right: float, rows: dict[int, list[tuple[float, float]]]) -> list[float]:
    """Middles of the x-ranges inside (left, right) that no row's glyph covers
    and that have words on both sides in two rows or more."""
    spans = sorted(span for row in rows.values() for span in row)
    if not spans:
        return []
    widths = sorted(x1 - x0 for x0, x1 in spans)
    wide = 2.5 * widths[len(widths) // 2]  # wider than two letters and a half: not a space
    gaps, reach = [], spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach > wide:
            middle = (x0 + reach) / 2
            both = sum(any(a < middle for a, _ in r) and any(a > middle for a, _ in r) for r in rows.values())
            if both >= 2:
                gaps.append(round(middle, 1))
        reach = max(reach, x1)
    return gaps


def _strokes(plumber_page) -> list[tuple[float, float, float, float]]:
    """pdfplumber's curves and slanted lines (it sees into nested forms)."""
    return [
        (o["x0"], o["top"], o["x1"], o["bottom"])
        for o in (*plumber_page.curves, *plumber_page.lines)
        if o["object_type"] == "curve" or (o["x1"] - o["x0"] > 1 and o["bottom"] - o["top"] > 1)
    ]


def _drawn(strokes, bbox) -> bool:
    """Whether the grid holds a drawing: a curved or slanted path larger than
    a bullet that does not touch its frame (a rounded corner does)."""
    x0, top, x1, bottom = bbox
    return any(
        left > x0 + 2 and right < x1 - 2 and up > top + 2 and down < bottom - 2 and max(right - left, down - up) > _MARK
        for left, up, right, down in strokes
    )


def _column(row, edges: list[float], rules: set[float], x: float, y: float) -> int:
    """The column of a glyph at (x, y) by the edges; but in a cell drawn across
    the rules of several columns (merged) its text goes to its first column."""
    for cell in row.cells:
        if cell and cell[0] <= x <= cell[2] and cell[1] <= y <= cell[3]:
            if any(cell[0] + _SNAP < e < cell[2] - _SNAP for e in rules):
                x = cell[0] + _SNAP
            break
    return sum(e <= x for e in edges[1:-1])


def _text_rows(placed: list[tuple[int, _Glyph]]) -> list[list[tuple[int, _Glyph]]]:
    """A ruled row's glyphs (column, glyph), one row per line of text where
    every line fills two columns or more (rows that no rule separates); the
    row whole otherwise (a cell's text wraps onto more lines)."""
    lines: list[list[tuple[int, _Glyph]]] = []
    reach = float("-inf")
    for column, glyph in sorted(placed, key=lambda p: p[1].top):
        if glyph.top > reach:  # clear of every glyph of the line so far (a superscript is not): a new line
            lines.append([])
            reach = glyph.bottom
        reach = max(reach, glyph.bottom)
        lines[-1].append((column, glyph))
    if len(lines) > 1 and all(len({c for c, _ in line}) >= 2 for line in lines):
        return lines
    return [placed]


def _rows(table, glyphs: list[_Glyph]) -> list[list[str]]:
    """The table's cells, every glyph inside it in the cell its middle is in."""
    edges = _column_edges(table, glyphs)
    rules = {round(c[0], 1) for row in table.rows for c in row.cells if c}
    x0, top, x1, bottom = table.bbox
    tops = [row.bbox[1] for row in table.rows] + [bottom]
    placed: dict[int, list[tuple[int, _Glyph]]] = {}
    for glyph in glyphs:
        x, y = glyph.middle
        if glyph.char == " " or not (x0 - _SNAP <= x <= x1 + _SNAP and top - _SNAP <= y <= bottom + _SNAP):
            continue
        r = min(len(table.rows) - 1, max(0, sum(t <= y for t in tops[1:-1])))
        placed.setdefault(r, []).append((_column(table.rows[r], edges, rules, x, y), glyph))
    rows = []
    for r in sorted(placed):
        for line in _text_rows(placed[r]):
            rows.append(
                [
                    cell_text(sorted((g for c, g in line if c == k), key=lambda g: g.index))
                    for k in range(len(edges) - 1)
                ]
            )
    rows = [row for row in rows if any(row)]
    keep = [c for c in range(len(edges) - 1) if any(row[c] for row in rows)]
    return [[row[c] for c in keep] for row in rows]


def _is_table(rows: list[list[str]]) -> bool:
    """Two rows and two columns at least, at least two rows with two filled
    cells, and at least half its cells filled."""
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return False
    filled = sum(bool(c) for r in rows for c in r)
    full_rows = sum(sum(bool(c) for c in r) >= 2 for r in rows)
    return full_rows >= 2 and filled * 2 >= sum(len(r) for r in rows)


def page_tables(plumber_page, pdf_page, number: int, drawing: Drawing) -> list[TableBox]:
    """The page's tables, their cells read from PDFium's characters."""
    found = plumber_page.find_tables()
    if not found:
        return []
    glyphs = glyphs_of(pdf_page, pdf_page.get_height())
    strokes = drawing.strokes + _strokes(plumber_page)
    tables = []
    for table in found:
        if _drawn(strokes, table.bbox):
            continue
        rows = _rows(table, glyphs)
        if _is_table(rows):
            x0, top, x1, bottom = table.bbox
            tables.append(TableBox(number, x0, x1, top, bottom, rows))
    return tables


@dataclass
class Drawing:
    """What a page draws besides text, top-down coordinates as (x0, top, x1,
    bottom): whether its rules make a grid (worth asking the table finder),
    its images, its thin horizontal rules, and the boxes of its curved or
    slanted paths (a figure's)."""

    grid: bool = False
    images: list[tuple[float, float, float, float]] = field(default_factory=list)
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)
    strokes: list[tuple[float, float, float, float]] = field(default_factory=list)


def _stroked(path) -> bool:
    """Whether a path draws a curve or a slanted line (not a rule or a box)."""
    raw = path.raw
    x, y = ctypes.c_float(), ctypes.c_float()
    last = None
    for k in range(pdfium_c.FPDFPath_CountSegments(raw)):
        segment = pdfium_c.FPDFPath_GetPathSegment(raw, k)
        kind = pdfium_c.FPDFPathSegment_GetType(segment)
        if kind == pdfium_c.FPDF_SEGMENT_BEZIERTO:
            return True
        pdfium_c.FPDFPathSegment_GetPoint(segment, x, y)
        point = (x.value, y.value)
        if (
            kind == pdfium_c.FPDF_SEGMENT_LINETO
            and last is not None
            and min(abs(point[0] - last[0]), abs(point[1] - last[1])) > 1
        ):
            return True
        last = point
    return False


def _within_any(box, frames) -> bool:
    return any(f[0] - 2 <= box[0] and box[2] <= f[2] + 2 and f[1] - 2 <= box[1] and box[3] <= f[3] + 2 for f in frames)


def survey(pdf_page, turn: Turn) -> Drawing:
    """What the page draws besides its text (Drawing). Its grid counts only
    rules outside the boxes of curved or slanted paths (a plot's axes and
    ticks are not a table's rules); a path as large as half the page (a
    border) does not hide any. Boxes are on the page turned to read it (pdf_turn)."""
    drawing = Drawing()
    paths = []
    for obj in pdf_page.get_objects(max_depth=2):
        if obj.type not in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
            continue
        box = turn.box(*obj.get_bounds())
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            drawing.images.append(box)
            continue
        paths.append(box)
        wide, high = box[2] - box[0], box[3] - box[1]
        if wide > RULE_WIDTH and high <= RULE_WIDTH:
            drawing.rules.append(box)
        if wide > RULE_WIDTH and high > RULE_WIDTH and _stroked(obj):
            drawing.strokes.append(box)
    width, height = turn.size
    figures = [b for b in drawing.strokes if (b[2] - b[0]) * (b[3] - b[1]) < width * height / 2]
    across: list[tuple[float, float, float]] = []  # x0, x1, y of edges across
    down: list[tuple[float, float, float]] = []  # top, bottom, x of edges down
    for x0, top, x1, bottom in paths:
        if figures and _within_any((x0, top, x1, bottom), figures):
            continue
        if x1 - x0 >= _EDGE:  # a rule, or a box's top and bottom
            across += [(x0, x1, bottom)] if bottom - top <= RULE_WIDTH else [(x0, x1, top), (x0, x1, bottom)]
        if bottom - top >= _EDGE:
            down += [(top, bottom, x0)] if x1 - x0 <= RULE_WIDTH else [(top, bottom, x0), (top, bottom, x1)]
    drawing.grid = _grid(across, down)
    return drawing


def _grid(across, down) -> bool:
    """Whether two edges down and three edges across them make a grid (each
    across reaching from one to the other, within the height both span): a
    table of two rows at least, its columns divided by rules or by space.

    Each edge down is paired only with the edges down that the edges across
    reaching it could reach, found by bisection, so a drawing of thousands of
    short strokes (graph paper: 18,560 of them) is decided in a fraction of a
    second rather than hours; past GRID_CHECKS comparisons the page counts as
    a drawing, not a table."""
    if len(across) < GRID_RULES or len(down) < FRAME_SIDES:
        return False
    down = sorted(down, key=lambda d: d[2])
    xs = [x for _, _, x in down]
    across = sorted(across, key=lambda a: a[2])
    ys = [y for _, _, y in across]
    checks = 0
    for top_a, bottom_a, xa in down:
        # The edges across that reach this edge within its height and go on at least _EDGE.
        near = across[bisect.bisect_left(ys, top_a - 2) : bisect.bisect_right(ys, bottom_a + 2)]
        reaching = [(x1, y) for x0, x1, y in near if x0 <= xa + 2 and x1 >= xa + _EDGE - 2]
        checks += len(near)
        if len({round(y) for _, y in reaching}) < GRID_RULES:
            continue
        far = max(x1 for x1, _ in reaching) + 2
        for top_b, bottom_b, xb in down[bisect.bisect_left(xs, xa + _EDGE) : bisect.bisect_right(xs, far)]:
            top, bottom = max(top_a, top_b) - 2, min(bottom_a, bottom_b) + 2
            checks += len(reaching)
            if len({round(y) for x1, y in reaching if x1 >= xb - 2 and top <= y <= bottom}) >= GRID_RULES:
                return True
            if checks > GRID_CHECKS:
                return False
        if checks > GRID_CHECKS:
            return False
    return False


def inside(line, table: TableBox) -> bool:
    """Whether a line of text lies in the table (its middle within it)."""
    middle = (line.top + line.bottom) / 2
    return table.top - 1 <= middle <= table.bottom + 1 and line.x0 >= table.x0 - 1 and line.x1 <= table.x1 + 1


def _overlap(a: TableBox, b: TableBox) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.top < b.bottom and b.top < a.bottom


def find_tables(ruled_pages: list, document, data: bytes) -> None:
    """Fills `tables` of each ruled page (pdf_layout.Page) and drops the lines
    inside them. pdfminer, under pdfplumber, is stricter than PDFium: where it
    cannot parse a page, that page keeps its lines as text and notes why
    (Page.tables_skipped)."""
    import pdfplumber  # only for documents that draw rules: slow to import and to parse
    from pdfminer.pdfexceptions import PDFException
    from pdfminer.psexceptions import PSException
    from pdfplumber.utils.exceptions import MalformedPDFException, PdfminerException

    unreadable = (
        PDFException,
        PSException,
        MalformedPDFException,
        PdfminerException,
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
    )
    done: set[int] = set()
    try:
        with pdfplumber.open(io.BytesIO(data)) as plumber:  # it parses pages lazily, also on close
            for page in ruled_pages:
                pdf_page = document[page.number - 1]
                try:
                    found = page_tables(plumber.pages[page.number - 1], pdf_page, page.number, page.drawing)
                    page.tables += [t for t in found if not any(_overlap(t, held) for held in page.tables)]
                finally:
                    pdf_page.close()
                done.add(page.number)
    except unreadable as exc:
        for page in ruled_pages:
            if page.number not in done:
                page.tables_skipped = "the table finder could not parse the page"
        log.info("the table finder stopped on a PDF: %s: %s", type(exc).__name__, str(exc)[:500])
    for page in ruled_pages:
        page.lines = [ln for ln in page.lines if not any(inside(ln, t) for t in page.tables)]
