"""Tables drawn without rules: text aligned in columns (ADR 0097).

A line of such a table is spread wide for the letters it holds: between its
cells lie gaps of an em or more. Rows are three or more consecutive lines
cut by those gaps into the same number of pieces, each piece below the
piece of the line above it (overlapping it across), and at least one column
short in every row (a number, a mark, a word or three) so that two columns
of prose side by side are not a table. Lines just above the rows whose
pieces all sit in the columns are its header, a header wrapped over two
lines joined into one row. Only pages with three or more spread lines are
looked at closely (their glyphs read from PDFium).
"""

from __future__ import annotations

import bisect
import dataclasses
from statistics import median
from typing import TYPE_CHECKING

from services.ingest.readers.pdf_order import gutters
from services.ingest.readers.pdf_tables import TableBox, cell_text, glyphs_of

if TYPE_CHECKING:  # pdf_layout calls into this module
    from services.ingest.readers.pdf_layout import Line, Page

_SPREAD = 1.8  # a line this many times wider per letter than the page's usual
_GAP = 2.0  # a gap this many median glyph widths wide divides cells
_ROWS = 3
_SHORT_WORDS = 3
_HEADER_LINES = 3
_REACH = 40.0  # points above and below a baseline where its glyphs are looked for


def _spread(page: Page) -> set[int]:
    """The ids of the lines spread wide for the letters they hold: wider per
    letter than the page's usual (the median over its letters, not its lines,
    so that a page mostly of table rows still has prose's measure)."""
    ratios = sorted(
        ((max(ln.x0, ln.x1) - min(ln.x0, ln.x1)) / len(ln.text), len(ln.text), id(ln))
        for ln in page.lines
        if len(ln.text) > 1
    )
    if not ratios:
        return set()
    half, seen, usual = sum(n for _, n, _ in ratios) / 2, 0, ratios[0][0]
    for ratio, letters, _ in ratios:
        seen += letters
        if seen >= half:
            usual = ratio
            break
    return {key for ratio, _, key in ratios if ratio > usual * _SPREAD}


def _on(line: Line, glyphs) -> list:
    """The line's glyphs: those across it standing on its last baseline, and
    those raised off it by less than their height (a bullet, a superscript)."""
    across = [
        g for g in glyphs if g.char != " " and min(line.x0, line.x1) - 1 <= g.middle[0] <= max(line.x0, line.x1) + 1
    ]
    standing = [g.bottom - g.top for g in across if g.top <= line.bottom + 1 <= g.bottom + 2]
    if not standing:
        return []
    height = median(standing)
    return [g for g in across if line.bottom - height <= g.middle[1] <= line.bottom + height * 0.3]


def _pieces(line: Line, glyphs) -> list[list]:
    """The line's glyphs cut at gaps wider than two median glyph widths."""
    inside = sorted(_on(line, glyphs), key=lambda g: g.x0)
    if not inside:
        return []
    width = median(g.x1 - g.x0 for g in inside)
    pieces = [[inside[0]]]
    for glyph in inside[1:]:
        if glyph.x0 - max(g.x1 for g in pieces[-1]) > width * _GAP:
            pieces.append([])
        pieces[-1].append(glyph)
    return pieces


class _Cuts:
    """Each line's pieces, cut when first asked for; glyphs looked up by height."""

    def __init__(self, glyphs) -> None:
        self.glyphs = sorted((g for g in glyphs if g.char != " "), key=lambda g: g.middle[1])
        self.heights = [g.middle[1] for g in self.glyphs]
        self.done: dict[int, list[list]] = {}

    def of(self, line: Line) -> list[list]:
        if id(line) not in self.done:
            low = bisect.bisect_left(self.heights, line.bottom - _REACH)
            high = bisect.bisect_right(self.heights, line.bottom + _REACH)
            self.done[id(line)] = _pieces(line, self.glyphs[low:high])
        return self.done[id(line)]


def _span(piece) -> tuple[float, float]:
    return min(g.x0 for g in piece), max(g.x1 for g in piece)


def _aligned(above: list, below: list) -> bool:
    """Same number of pieces, each overlapping the one above it across."""
    if len(above) != len(below):
        return False
    return all(_span(a)[0] <= _span(b)[1] and _span(b)[0] <= _span(a)[1] for a, b in zip(above, below))


def _text(piece) -> str:
    return cell_text(sorted(piece, key=lambda g: g.index))


def _header(lines: list[Line], rows: list[Line], cut: _Cuts, columns) -> tuple[list[str], list[Line]]:
    """The header above the rows and its lines: the nearest lines above them,
    within two row pitches, across the table, whose pieces each sit over one
    column; joined per column (a header wrapped over two lines is one)."""
    pitch = median(b.bottom - a.bottom for a, b in zip(rows, rows[1:]))
    left, right = columns[0][0], columns[-1][1]
    above = sorted(
        (
            ln
            for ln in lines
            if ln.bottom < rows[0].top
            and rows[0].bottom - ln.bottom <= 2 * pitch
            and min(ln.x0, ln.x1) <= right
            and left <= max(ln.x0, ln.x1)
        ),
        key=lambda ln: -ln.bottom,
    )
    header, taken = [""] * len(columns), []
    size = median(ln.size for ln in rows)
    for line in above[:_HEADER_LINES]:
        if line.size > size + 0.5:  # a heading over the table, not its header
            break
        slots = []
        for piece in cut.of(line):
            x0, x1 = _span(piece)
            hits = [k for k, (c0, c1) in enumerate(columns) if x0 <= c1 and c0 <= x1]
            if len(hits) != 1:
                return (header, taken) if taken else ([], [])
            slots.append((hits[0], piece))
        for k, piece in slots:
            header[k] = f"{_text(piece)} {header[k]}".strip()
        taken.append(line)
    # A header names most columns: one cell over a wide table is a caption.
    return (header, taken) if taken and 2 * sum(map(bool, header)) >= len(columns) else ([], [])


def _across(a: Line, b: Line) -> bool:
    return min(a.x0, a.x1) <= max(b.x0, b.x1) and min(b.x0, b.x1) <= max(a.x0, a.x1)


def _run(lines: list[Line], cut: _Cuts, i: int) -> list[int]:
    """The indexes of the lines from `i` on that are aligned row under row:
    each the nearest line below the one before that it overlaps across (a
    line of another column beside it is passed over)."""
    run = [i]
    while len(cut.of(lines[run[-1]])) >= 2:
        last = lines[run[-1]]
        below = next(
            (k for k in range(run[-1] + 1, len(lines)) if lines[k].top > last.top + 1 and _across(last, lines[k])), None
        )
        if below is None or not _aligned(cut.of(last), cut.of(lines[below])):
            break
        run.append(below)
    return run


def find_aligned(document, pages: list[Page]) -> None:
    """The tables drawn without rules on every page whose ruled tables the
    table finder could read (elsewhere the text stays as it is, and says so)."""
    for page in pages:
        if page.tables_skipped or page.turned or len(_spread(page)) < _ROWS:
            continue  # a turned page's glyphs would be read unturned (ADR 0169)
        pdf_page = document[page.number - 1]
        try:
            aligned_tables(pdf_page, page)
        finally:
            pdf_page.close()


def _baselines(lines: list[Line]) -> list[list[Line]]:
    """The lines grouped by baseline (within 2 pt), left to right."""
    groups: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: (ln.bottom, ln.x0)):
        if groups and abs(groups[-1][0].bottom - line.bottom) <= 2:
            groups[-1].append(line)
        else:
            groups.append([line])
    return [sorted(g, key=lambda ln: min(ln.x0, ln.x1)) for g in groups]


def _joined(page: Page, cut: _Cuts) -> tuple[list[Line], dict[int, list[Line]]]:
    """The page's lines, those on one baseline joined into one where together
    they cut into three pieces or more (a row whose cells PDFium read as
    lines of their own); and the lines each joined one stands for."""
    cuts = gutters(page.lines, page.width)
    lines, members = [], {}
    for group in _baselines(page.lines):
        sides = {sum(min(ln.x0, ln.x1) >= x for x in cuts) for ln in group}
        if len(group) > 1 and len(sides) == 1:  # never across the gutter between two columns
            joined = dataclasses.replace(
                group[0],
                text=" ".join(ln.text for ln in group),
                x0=min(min(ln.x0, ln.x1) for ln in group),
                x1=max(max(ln.x0, ln.x1) for ln in group),
                top=min(ln.top for ln in group),
            )
            if len(cut.of(joined)) >= 3:
                lines.append(joined)
                members[id(joined)] = group
                continue
        lines.extend(group)
    return sorted(lines, key=lambda ln: (round(ln.top, 1), ln.x0)), members


def aligned_tables(pdf_page, page: Page) -> None:
    """Adds the page's tables drawn without rules to `page.tables` and takes
    their lines out of `page.lines`."""
    rows_of_lines = sum(len(g) >= 3 for g in _baselines(page.lines))
    if len(_spread(page)) < _ROWS and rows_of_lines < _ROWS:
        return
    cut = _Cuts(glyphs_of(pdf_page, page.height))
    lines, members_of = _joined(page, cut)
    gone: set[int] = set()
    i = 0
    while i < len(lines):
        run = _run(lines, cut, i)
        rows = [[_text(p) for p in cut.of(lines[k])] for k in run]
        if len(run) < _ROWS or not any(
            all(len(r[c].split()) <= _SHORT_WORDS for r in rows) for c in range(len(rows[0]))
        ):
            i += 1
            continue
        pieces = [cut.of(lines[k]) for k in run]
        columns = [
            (min(_span(p[c])[0] for p in pieces), max(_span(p[c])[1] for p in pieces)) for c in range(len(rows[0]))
        ]
        header, above = _header(lines, [lines[k] for k in run], cut, columns)
        above = [ln for ln in above if id(ln) not in gone]
        members = above + [lines[k] for k in run]
        page.tables.append(
            TableBox(
                page.number,
                columns[0][0],
                columns[-1][1],
                min(ln.top for ln in members),
                max(ln.bottom for ln in members),
                [header, *rows] if header and above else rows,
            )
        )
        gone.update(id(part) for ln in members for part in members_of.get(id(ln), [ln]))
        i = run[-1] + 1
    page.lines = [ln for ln in page.lines if id(ln) not in gone]
