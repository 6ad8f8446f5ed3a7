"""A PDF page's lines and tables in the order a person reads them (ADRs 0054, 0098).

Columns: where the page's lines leave a gutter in its middle band, the left
column is read before the right one between the lines that span both.

Text that is not the body is read apart from it, after the page's body and
never joined to a body paragraph (each line carries its `region`):
- a figure's labels: lines inside an image, or inside the frame of a
  drawing's curved or slanted strokes, where they would otherwise be
  spliced into the sentences beside them;
- footnotes: the lines below a short rule in the lower part of the page (the
  footnote separator), or set smaller than the body there and opening with a
  marker ("1", "*", "†"); each marker opens a footnote of its own.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from services.ingest.readers.pdf_tables import TableBox

if TYPE_CHECKING:  # pdf_layout calls into pdf_aligned, which asks this module for the gutter
    from services.ingest.readers.pdf_layout import Line, Page

_MARKER = re.compile(r"^(?:\d{1,3}|[*\u2020\u2021\u00a7\u00b6]+)\s*(?=\S)|^[a-z]\s+(?=\S)")
# "Figure 3:", "Abb. 2.1.", "Table 4 -": a caption, read with the body.
_CAPTION = re.compile(r"^[^\W\d_]+\.?\s+[\dIVX]+(?:[.-]\d+)*\s*[:.\u2013\u2014-]")
_FOOT_ZONE = 0.6  # footnotes start below this share of the page's height
_SEPARATOR_MAX = 0.5  # a footnote rule is at most half as wide as the text
_FIGURE_MIN = 40.0  # points: a drawing or image smaller than this each way holds no labels
_STROKES = 3  # curved or slanted strokes that make a drawing
_LISTED_LINES = 8  # lines of a column of short entries that make it a column (_listed)
SCAN_WORDS = 5  # words a line, on average, of the text recognised on a scanned page (_scanned_page)


def _gap_in(lines: list[Line], low: float, high: float) -> float | None:
    """The x between `low` and `high` crossed by the fewest lines, if at most
    20% of the lines cross it and three at least lie on each side."""
    best, crossing = 0.0, len(lines) + 1
    for step in range(31):
        x = low + (high - low) * step / 30
        crossed = sum(min(ln.x0, ln.x1) < x < max(ln.x0, ln.x1) for ln in lines)
        if crossed < crossing:
            best, crossing = x, crossed
    left = sum(max(ln.x0, ln.x1) <= best for ln in lines)
    right = sum(min(ln.x0, ln.x1) >= best for ln in lines)
    return best if left >= 3 and right >= 3 and crossing <= 0.2 * len(lines) else None


def _span(lines: list[Line]) -> tuple[float, float]:
    return min(min(ln.x0, ln.x1) for ln in lines), max(max(ln.x0, ln.x1) for ln in lines)


def _filled(lines: list[Line]) -> bool:
    """Whether the lines fill their column: half of them at least as wide as
    60% of the span they take (prose, not formula pieces or labels)."""
    left, right = _span(lines)
    return 2 * sum(abs(ln.x1 - ln.x0) >= 0.6 * (right - left) for ln in lines) >= len(lines)


def _listed(lines: list[Line]) -> bool:
    """Whether the lines are a column of a list (names and their places, set short): LISTED_LINES
    or more, each on a row of its own, as a formula's pieces are not."""
    return len(lines) >= _LISTED_LINES and len({round(ln.top) for ln in lines}) == len(lines)


def gutters(lines: list[Line], width: float) -> list[float]:
    """The x of the gaps between the page's columns: one in the middle band
    (35-65%) of the width for two columns, plus one in the middle band of a
    side twice as wide as the other for three (each column filled with
    prose); else one around a third and one around two thirds; none for one
    column."""
    if len(lines) < 6:
        return []
    middle = _gap_in(lines, width * 0.35, width * 0.65)
    if middle is None:
        thirds = [_gap_in(lines, width * 0.2, width * 0.45), _gap_in(lines, width * 0.55, width * 0.8)]
        return [x for x in thirds if x is not None] if None not in thirds else []
    sides = [[ln for ln in lines if max(ln.x0, ln.x1) <= middle], [ln for ln in lines if min(ln.x0, ln.x1) >= middle]]
    widths = [_span(side)[1] - _span(side)[0] if side else 0.0 for side in sides]
    for side, wide, other in ((sides[0], widths[0], widths[1]), (sides[1], widths[1], widths[0])):
        if len(side) >= 6 and wide >= 1.6 * other:
            left, right = _span(side)
            more = _gap_in(side, left + 0.35 * wide, left + 0.65 * wide)
            parts = [
                [ln for ln in side if max(ln.x0, ln.x1) <= (more or 0)],
                [ln for ln in side if min(ln.x0, ln.x1) >= (more or 0)],
            ]
            if more is not None and all(part and (_filled(part) or _listed(part)) for part in parts):
                return sorted([middle, more])
    return [middle]


def _figures(page: Page) -> list[tuple[tuple[float, float, float, float], bool]]:
    """Frames of the page's figures: its images, and the spans of its
    drawings (overlapping boxes of curved or slanted strokes, three or more),
    each with whether it is drawn (its labels may sit just outside it)."""
    frames = [
        (b, False)
        for b in page.drawing.images
        if b[2] - b[0] >= _FIGURE_MIN and b[3] - b[1] >= _FIGURE_MIN and not _scanned_page(page, b)
    ]
    clusters: list[list[float]] = []  # x0, top, x1, bottom, strokes
    for x0, top, x1, bottom in sorted(page.drawing.strokes, key=lambda b: b[1]):
        for c in clusters:
            if x0 <= c[2] + 5 and x1 >= c[0] - 5 and top <= c[3] + 5 and bottom >= c[1] - 5:
                c[:4] = [min(c[0], x0), min(c[1], top), max(c[2], x1), max(c[3], bottom)]
                c[4] += 1
                break
        else:
            clusters.append([x0, top, x1, bottom, 1])
    for x0, top, x1, bottom, count in clusters:
        if count >= _STROKES and x1 - x0 >= _FIGURE_MIN and bottom - top >= _FIGURE_MIN:
            frames.append(((x0, top, x1, bottom), True))
    return frames


def _scanned_page(page: Page, image: tuple[float, float, float, float]) -> bool:
    """Whether the image is a scanned page under its recognised text, not a figure: half the page
    or more, and the lines on it prose (SCAN_WORDS words a line or more on average), where a
    figure's labels are a few words each. Its lines are the page's body, or a document that
    mixes scanned and typeset pages takes the typeset ones' size for the body's and every line
    of the scans for a heading."""
    x0, top, x1, bottom = image
    if (x1 - x0) * (bottom - top) < page.width * page.height / 2:
        return False
    on = [ln.text for ln in page.lines if _within(ln, image, 0.0)]
    return bool(on) and sum(len(text.split()) for text in on) >= SCAN_WORDS * len(on)


def _within(line: Line, frame: tuple[float, float, float, float], margin: float) -> bool:
    """Whether the line lies in the frame, or, as an axis's labels do, just
    outside it (within `margin`) and short or mostly figures; a caption never."""
    x0, top, x1, bottom = frame
    left, right = min(line.x0, line.x1), max(line.x0, line.x1)
    if _CAPTION.match(line.text):
        return False
    if left >= x0 - 2 and right <= x1 + 2 and line.top >= top - 2 and line.bottom <= bottom + 2:
        return True
    label = len(line.text.split()) <= 3 or sum(c.isdigit() for c in line.text) * 2 >= len(line.text.replace(" ", ""))
    beside = (
        left >= x0 - margin and right <= x1 + margin and line.bottom >= top - margin and line.top <= bottom + margin
    )
    return label and beside


def _body_size(lines: list[Line]) -> float:
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _footnotes(page: Page, body: list[Line], size: float) -> list[Line]:
    """The page's footnote lines, top to bottom (see the module's doc)."""
    if not body:
        return []
    left = min(min(ln.x0, ln.x1) for ln in body)
    right = max(max(ln.x0, ln.x1) for ln in body)
    zone = page.height * _FOOT_ZONE
    rules = [
        r
        for r in page.drawing.rules
        if r[1] >= zone and r[2] - r[0] <= (right - left) * _SEPARATOR_MAX and r[0] <= left + size * 2
    ]
    ordered = sorted(body, key=lambda ln: ln.top)
    if rules:
        line_y = min(r[1] for r in rules)
        below = [ln for ln in ordered if ln.top >= line_y - 1]
        if below and _MARKER.match(below[0].text):
            return below
    small = []
    for line in reversed(ordered):  # from the bottom up, while the lines are small
        if line.top < zone or line.size > size - 1:
            break
        small.insert(0, line)
    return small if small and _MARKER.match(small[0].text) else []


def _set_apart(page: Page) -> list[Line]:
    """Marks the page's figure labels and footnotes (Line.region); returns them
    in the order they are read: each figure's labels, then the footnotes."""
    apart: list[Line] = []
    heights = sorted(ln.bottom - ln.top for ln in page.lines)
    margin = 1.5 * heights[len(heights) // 2] if heights else 0.0  # a line and a half
    for k, (frame, drawn) in enumerate(_figures(page), 1):
        for line in sorted(page.lines, key=lambda ln: (round(ln.top, 1), ln.x0)):
            if not line.region and _within(line, frame, margin if drawn else 0.0):
                line.region = f"figure {k}"
                apart.append(line)
    body = [ln for ln in page.lines if not ln.region]
    note = 0
    for line in _footnotes(page, body, _body_size(page.lines)):
        if note == 0 or _MARKER.match(line.text):
            note += 1
        line.region = f"footnote {note}"
        apart.append(line)
    return apart


def reading_order(page: Page) -> list[Line | TableBox]:
    """The page's lines and tables as a reader reads them: top to bottom, and
    where the page has columns, each column before the next one to its right
    between the lines that span them; figure labels and footnotes after the body."""
    apart = _set_apart(page)
    kept = {id(ln) for ln in apart}
    body = [ln for ln in page.lines if id(ln) not in kept]
    items: list[Line | TableBox] = [*body, *page.tables]
    cuts = gutters(body, page.width)
    ordered: list[Line | TableBox] = []
    band: list[Line | TableBox] = []

    def flush() -> None:
        ordered.extend(
            sorted(band, key=lambda it: (sum(min(it.x0, it.x1) >= x for x in cuts), round(it.top, 1), it.x0))
        )
        band.clear()

    for item in sorted(items, key=lambda it: (round(it.top, 1), it.x0)):
        if any(min(item.x0, item.x1) < x < max(item.x0, item.x1) for x in cuts):
            flush()
            ordered.append(item)
        else:
            band.append(item)
    flush()
    return ordered + apart
