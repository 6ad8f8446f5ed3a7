"""A PDF's headings: from fonts (size rank, weight, the length of the whole
title) and from the outline, combined (ADR 0094).

A bookmark names the line it points at and gives it the outline's level; a
line whose font marks it as a heading is one whether or not a bookmark names
it (a paper whose only bookmark is its title keeps its numbered sections), at
the level of its style among the styles the outline placed, or by size rank
where the outline placed none.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from services.ingest.readers.pdf_layout import LINE_HYPHEN, Line, Page, TableBox

_SECTION_NUMBER = re.compile(r"^(?:\d+|[a-z]|[ivxlc]+)(?:\.\d+)*[.)]?\s+")
# A heading is short: a longer run of lines in a large or bold font is emphasis.
_HEADING_MAX_CHARS = 150
_HEADING_MAX_WORDS = 18
# A page number, a figure's axis value or a lone symbol is never a heading.
_NOT_TITLE = re.compile(r"^[\W\d_]*$")
_FRAGMENT_WORDS = 3  # words at most of a run in small letters that is a fragment, not a title (_fragment)


@dataclass
class _Heading:
    level: int
    title: str
    page: int


@dataclass
class Headings:
    """The headings found, by the id() of the line that carries them (None for
    the further lines of a wrapped title), and the sections that bookmarks
    open before a line without naming any."""

    at: dict[int, _Heading | None] = field(default_factory=dict)
    before: dict[int, list[_Heading]] = field(default_factory=dict)


def _gap(previous: Line, line: Line) -> float:
    """Baseline to baseline, from the last of `previous` to the first of `line`."""
    return line.top + line.size - previous.bottom


def _normal(text: str) -> str:
    return " ".join(text.replace(LINE_HYPHEN, "-").lower().split())


def _bare(text: str) -> str:
    """Normalized, without a leading section number ("2.1 ", "A. ", "iv) "):
    a bookmark often leaves out the number its heading prints, or the reverse."""
    return _SECTION_NUMBER.sub("", _normal(text), count=1)


def outline(document: pdfium.PdfDocument, pages: list[Page]) -> list[tuple[int, str, int, float]]:
    """(level from 1, title, page from 1, top of the destination or -1) per bookmark."""
    entries = []
    for bookmark in document.get_toc(max_depth=6):
        title = " ".join((bookmark.get_title() or "").split())
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if not title or index is None or index >= len(pages):
            continue
        mode, view = dest.get_view()
        top = pages[index].height - view[1] if mode == pdfium_c.PDFDEST_VIEW_XYZ and len(view) >= 2 else -1.0
        entries.append((bookmark.level + 1, title, index + 1, top))
    return entries


def _match(items: list[Line | TableBox], candidates: list[int], want: str, page: int) -> tuple[int, int, str] | None:
    """The first candidate line whose text (joined with the lines after it on
    its page, for a wrapped title) is `want`, section numbers aside."""
    for i in candidates:
        printed, j = items[i].text, i
        while (
            want.startswith(_bare(printed))
            and _bare(printed) != want
            and j + 1 < len(items)
            and isinstance(items[j + 1], Line)
            and items[j + 1].page == page
        ):
            j += 1
            printed = f"{printed} {items[j].text}"
        if _bare(printed) == want:
            return i, j, printed
    return None


def outline_headings(items: list[Line | TableBox], entries) -> Headings:
    """Which lines the bookmarks name: the first line at or below the
    destination on its page whose text (joined with the lines after it on
    that page, for a wrapped title) is the bookmark's title, section numbers
    aside; the heading keeps the printed title. A bookmark whose
    title is not on its page still opens a section there, before the first
    line at or below its destination (or the next page's first line)."""
    found = Headings()
    by_page: dict[int, list[int]] = {}
    for i, item in enumerate(items):
        if isinstance(item, Line):
            by_page.setdefault(item.page, []).append(i)
    for level, title, page, top in entries:
        heading = _Heading(level, title, page)
        candidates = [i for i in by_page.get(page, []) if id(items[i]) not in found.at]
        below = [i for i in candidates if top < 0 or items[i].top >= top - items[i].size * 2]
        match = _match(items, below + sorted(set(candidates) - set(below)), _bare(title), page)
        if match is not None:
            first, last, printed = match
            # The title as printed, with its number, and the outline's level.
            heading.title = " ".join(printed.replace(LINE_HYPHEN, "-").split())
            found.at[id(items[first])] = heading
            for k in range(first + 1, last + 1):
                found.at[id(items[k])] = None
        else:  # on a page without text, the section opens at the next line there is
            at = (below or candidates or [next((i for i, it in enumerate(items) if it.page > page), None)])[0]
            if at is not None:
                found.before.setdefault(id(items[at]), []).append(heading)
    return found


def _body_style(lines: list[Line]) -> tuple[float, bool]:
    """The (size, bold) holding most of the body's characters: figure labels and footnotes
    (Line.region) left out, or a diagram-heavy report's 3 pt labels pass for its body and every
    line of its text for a heading; all lines when the page holds nothing else."""
    weights: Counter[tuple[float, bool]] = Counter()
    for line in [ln for ln in lines if not ln.region] or lines:
        weights[(line.size, line.bold)] += len(line.text)
    return weights.most_common(1)[0][0]


def _style(line: Line) -> tuple[float, bool]:
    return line.size, line.bold


def font_headings(items: list[Line | TableBox]) -> Headings:
    """Headings by font: runs of lines larger than the body text, or bold where
    the body is not, short as a whole; a title wrapped over lines of one style
    is one heading. Levels by size rank, bold before regular."""
    lines = [it for it in items if isinstance(it, Line)]
    if not lines:
        return Headings()
    body_size, body_bold = _body_style(lines)

    def looks_like(line: Line) -> bool:
        if line.mono or _NOT_TITLE.match(line.text):
            return False
        return line.size >= body_size + 1 or (line.bold and not body_bold and line.size >= body_size - 0.5)

    runs: list[list[Line]] = []
    previous: Line | None = None
    for item in items:
        if not isinstance(item, Line) or not looks_like(item):
            previous = None
            continue
        wrapped = (
            previous is not None
            and previous.page == item.page
            and _style(previous) == _style(item)
            and 0 < _gap(previous, item) <= item.size * 1.7
        )
        if wrapped:
            runs[-1].append(item)
        else:
            runs.append([item])
        previous = item
    runs = [run for run in runs if _short(run) and not _fragment(_joined(run))]
    styles = sorted({_style(run[0]) for run in runs}, key=lambda s: (-s[0], not s[1]))
    rank = {style: min(6, i + 1) for i, style in enumerate(styles)}
    found: dict[int, _Heading | None] = {}
    for run in runs:
        title = " ".join(_joined(run).split())
        found[id(run[0])] = _Heading(rank[_style(run[0])], title, run[0].page)
        for line in run[1:]:
            found[id(line)] = None
    return Headings(at=found)


def _joined(run: list[Line]) -> str:
    text = ""
    for line in run:
        piece = line.text.replace(LINE_HYPHEN, "-")
        text = text[:-1] + piece if text.endswith("-") and piece[:1].islower() else f"{text} {piece}".strip()
    return text


def _fragment(text: str) -> bool:
    """Whether a run of three words at most opens with a word all in small letters ("or",
    "contrast)", "x", not "iPhone" or "pH"): a label of a diagram or a piece of a sentence set in
    bold, no title, which opens with a capital, a digit or a mark. A longer one can be a
    function's signature ("int asn1_create_element (...)"), which a manual heads its entry with."""
    words = text.split()
    word = words[0].rstrip(")],.;:") if words else ""
    return len(words) <= _FRAGMENT_WORDS and word.isalpha() and word.islower()


def _short(run: list[Line]) -> bool:
    text = _joined(run)
    return len(text) <= _HEADING_MAX_CHARS and len(text.split()) <= _HEADING_MAX_WORDS and len(run) <= 3


def combined_headings(items: list[Line | TableBox], entries) -> Headings:
    """The outline's headings and the font's together: where a bookmark names a
    line the outline's level and title stand; every other font heading keeps
    its place, at the level of the nearest larger style the outline placed
    plus its rank below that style (its own rank where the outline placed none)."""
    by_font = font_headings(items)
    if not entries:
        return by_font
    found = outline_headings(items, entries)
    lines = {id(it): it for it in items if isinstance(it, Line)}
    placed: dict[int, int] = {}  # font rank -> the outline level it took
    for key, heading in found.at.items():
        font = by_font.at.get(key)
        if heading is not None and font is not None:
            placed[font.level] = min(placed.get(font.level, heading.level), heading.level)
    covered = set(found.at)
    for key, heading in by_font.at.items():
        if key in covered:
            continue
        if heading is None:
            if _owner_covered(items, lines[key], by_font, covered):
                continue
            found.at[key] = None
            continue
        larger = [r for r in placed if r <= heading.level]
        level = placed[max(larger)] + heading.level - max(larger) if larger else heading.level
        if heading.level in placed:
            level = placed[heading.level]
        found.at[key] = _Heading(max(1, min(6, level)), heading.title, heading.page)
    _drop_orphans(items, found)
    return found


def _owner_covered(items, line: Line, by_font: Headings, covered: set[int]) -> bool:
    """Whether the font heading that `line` continues is one a bookmark named."""
    index = next(i for i, it in enumerate(items) if it is line)
    for it in reversed(items[:index]):
        head = by_font.at.get(id(it), "missing")
        if head == "missing":
            return False
        if head is not None:
            return id(it) in covered
    return False


def _drop_orphans(items, found: Headings) -> None:
    """A continuation line whose heading start is not a heading is body text again."""
    owner = False
    for item in items:
        key = id(item)
        if key not in found.at:
            owner = False
            continue
        if found.at[key] is None and not owner:
            del found.at[key]
        else:
            owner = True
