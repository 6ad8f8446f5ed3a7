"""How an HTML page's content renders as canonical Markdown blocks (ADR 0057): h1-h6 as `#` lines,
paragraphs as text, list items as `- ` or `1. ` lines (nested lists indented), tables as Markdown
tables, `<pre>` as fenced code, blockquotes as `> ` lines, loose inline text gathered into
paragraphs. A heading that holds blocks of its own (a page that closes `<h2>` with `</h3>`, so
the parser nests the article inside it) is its inline text; its blocks follow it as blocks.
"""

from __future__ import annotations

import re
from copy import deepcopy

from services.ingest.readers.markdown import Writer, markdown_table

HEADINGS = {f"h{n}": n for n in range(1, 7)}

_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "cite",
    "code",
    "data",
    "del",
    "dfn",
    "em",
    "font",
    "i",
    "img",
    "ins",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "time",
    "tt",
    "u",
    "var",
    "wbr",
    "br",
    "acronym",
    "nobr",
    "output",
    "meter",
    "progress",
    "ruby",
    "rt",
    "rp",
}
_PARAGRAPHS = {"p", "figcaption", "caption", "summary", "legend", "address"}
# Elements that break a line when they sit inside inline text (a list item's paragraphs,
# a link around a heading): the rest render as blocks of their own.
_BLOCKS = {
    *HEADINGS,
    *_PARAGRAPHS,
    "div",
    "ul",
    "ol",
    "li",
    "pre",
    "table",
    "tr",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "figure",
    "dl",
    "hr",
    "details",
}
# Blocks that end a heading's title when the parser nested them inside it.
_TEXT_BLOCKS = {*HEADINGS, "p", "ul", "ol", "dl", "pre", "table", "blockquote", "article", "section", "main"}
_CODE_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]+)")
# A line break from <br> while inline text is gathered (no parsed text holds NUL).
_BREAK = "\x00"


def _inline(element, skip: frozenset[str] = frozenset()) -> list[str]:
    """element's text pieces, `<br>` as a line break, children tagged in skip left out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "br":
            parts.append(_BREAK)
        elif child.tag in _BLOCKS and child.tag not in skip:
            parts += [_BREAK, *_inline(child, skip), _BREAK]
        elif child.tag in ("td", "th") and child.tag not in skip:  # a table in a list item: cells apart
            parts += [" ", *_inline(child, skip), " "]
        elif child.tag not in skip:
            parts += _inline(child, skip)
        parts.append(child.tail or "")
    return parts


def _lines(pieces: list[str]) -> list[str]:
    """Joined inline pieces as non-empty lines, each run of whitespace one space, none at the ends."""
    return [line for line in (" ".join(piece.split()) for piece in "".join(pieces).split(_BREAK)) if line]


def text_of(element, skip: frozenset[str] = frozenset()) -> str:
    """element's text on one line."""
    return " ".join(_lines(_inline(element, skip)))


class Walker:
    """Renders the content's blocks into a Writer, gathering loose inline text into paragraphs."""

    def __init__(self, writer: Writer | None = None) -> None:
        self.writer = writer if writer is not None else Writer()
        self.pending: list[str] = []
        self.quote = 0

    def flush(self) -> None:
        lines = _lines(self.pending)
        self.pending = []
        if lines:
            prefix = "> " * self.quote
            self.writer.paragraph("\n".join(prefix + line for line in lines))

    def container(self, element, children=None) -> None:
        """Renders element's children (or the given ones, without element's own text) as blocks."""
        self.pending.append(element.text or "" if children is None else "")
        for child in element if children is None else children:
            tag = child.tag
            if tag == "br":
                self.pending.append(_BREAK)
            elif tag in _INLINE and not any(e.tag in _BLOCKS for e in child.iterdescendants()):
                self.pending += _inline(child)
            else:
                self.flush()
                self.block(child, tag)
            self.pending.append(child.tail or "")

    def block(self, element, tag: str) -> None:
        if tag in HEADINGS:
            self.heading(element, HEADINGS[tag])
        elif tag in _PARAGRAPHS:
            self.pending = _inline(element)
            self.flush()
        elif tag in ("ul", "ol"):
            self.items(element, 0, continues=False)
        elif tag == "dl":
            self.definitions(element, 0, continues=False)
        elif tag == "pre":
            self.code(element)
        elif tag == "table" and not _is_layout(element):
            self.table(element)
        elif tag == "blockquote":
            self.quote += 1
            self.container(element)
            self.flush()
            self.quote -= 1
        else:  # div, section, article, a layout table, an unknown element: its children are the blocks
            self.container(element)
            self.flush()

    def heading(self, element, level: int) -> None:
        """The heading's inline text as its title; blocks nested in it follow it as blocks."""
        children = list(element)
        first_block = next((i for i, c in enumerate(children) if _holds_block(c)), len(children))
        pieces = [element.text or ""]
        for child in children[:first_block]:
            pieces += [_BREAK] if child.tag == "br" else _inline(child)
            pieces.append(child.tail or "")
        title = " ".join(_lines(pieces))
        if title:
            self.writer.heading(level, title)
        if first_block < len(children):
            self.container(element, children[first_block:])
            self.flush()

    def definitions(self, element, depth: int, continues: bool) -> bool:
        """A description list as a list: each term an item, its descriptions items under it (a
        description's own lists and description lists nested deeper); whether an item was written."""
        nested = frozenset({"ul", "ol", "dl"})
        for child in element:
            if child.tag == "div":  # HTML allows a div around each term and its descriptions
                continues = self.definitions(child, depth, continues)
                continue
            if child.tag not in ("dt", "dd"):
                continue
            level = depth if child.tag == "dt" else depth + 1
            lines = _lines(_inline(child, nested | {"pre"}))
            if lines:
                marker = "  " * level + "-"
                self.writer.list_item(("\n" + " " * (len(marker) + 1)).join(lines), marker, continues)
                continues = True
            under = level + 1 if lines else level  # a description that is only a list holds it in its place
            for inner in _nested_blocks(child):
                if inner.tag == "pre":
                    self.code(inner)
                    continues = False
                else:
                    continues = self.items(inner, under, continues)
            for inner in child.iterfind("dl"):
                continues = self.definitions(inner, under, continues)
        return continues

    def items(self, element, depth: int, continues: bool) -> bool:
        """Writes a list's items (nested lists indented under theirs); whether an item was written."""
        down = element.get("reversed") is not None  # <ol reversed> counts down, from its items' count
        step = -1 if down else 1
        start = _number(element.get("start"))
        number = start if start is not None else (len(element.findall("li")) if down else 1)
        for item in element:
            if item.tag in ("ul", "ol"):  # a list directly in a list, as some editors write it
                continues = self.items(item, depth + 1, continues)
                continue
            if item.tag != "li":
                continue
            number = _number(item.get("value"), number)  # <li value> sets its number and the next ones'
            lines = _lines(_inline(item, frozenset({"ul", "ol", "pre"})))
            marker = "  " * depth + (f"{number}." if element.tag == "ol" else "-")
            if lines:
                indent = "\n" + " " * (len(marker) + 1)
                self.writer.list_item(indent.join(lines), marker, continues)
                continues, number = True, number + step
            for nested in _nested_blocks(item):
                if nested.tag == "pre":  # its lines as written, after the item's text
                    self.code(nested)
                    continues = False
                else:
                    continues = self.items(nested, depth + 1, continues)
        return continues

    def code(self, element) -> None:
        code = "".join(_raw(element)).removeprefix("\n").rstrip()
        if code.strip():
            classes = " ".join(e.get("class") or "" for e in [element, *element.iterfind("code")])
            match = _CODE_LANGUAGE.search(classes)
            self.writer.code(code, match.group(1) if match else "")

    def table(self, element) -> None:
        caption = element.find("caption")
        if caption is not None:
            self.block(caption, "caption")
        lines = markdown_table(_table_rows(element))
        if lines:
            self.writer.table(lines)


def _table_rows(table) -> list[list[str]]:
    """A data table's rows of cell texts, a cell that spans columns or rows (colspan, rowspan)
    repeated over them, as the Word reader does, so that every value sits under its header; a
    cell across the whole table (a title row) is written once. Spans are bounded by the table."""
    rows = table.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
    width = max((sum(_span(cell, "colspan", _MAX_SPAN) for cell in row.xpath("./th|./td")) for row in rows), default=0)
    grid: list[list[str]] = []
    below: dict[int, tuple[str, int]] = {}  # column -> (text, rows it still spans) of a cell above
    for index, row in enumerate(rows):
        cells: list[str] = []
        for cell in row.xpath("./th|./td"):
            while len(cells) in below:
                cells.append(_carried(below, len(cells)))
            text = _cell_text(cell)
            across = min(_span(cell, "colspan", _MAX_SPAN), max(width - len(cells), 1))
            down = _span(cell, "rowspan", len(rows) - index)
            spread = [text] if across == width > 1 else [text] * across
            for value in spread + [""] * (across - len(spread)):
                if down > 1:
                    below[len(cells)] = (value, down - 1)
                cells.append(value)
        while below and len(cells) <= max(below):
            cells.append(_carried(below, len(cells)) if len(cells) in below else "")
        grid.append(cells)
    return grid


def _carried(below: dict[int, tuple[str, int]], column: int) -> str:
    text, left = below.pop(column)
    if left > 1:
        below[column] = (text, left - 1)
    return text


# colspan past this (HTML allows 1000) is read as this: no real table is wider.
_MAX_SPAN = 100
_INTEGER = re.compile(r"-?[0-9]{1,9}")


def _span(cell, attribute: str, most: int) -> int:
    """A cell's colspan or rowspan, 1 to `most` (rowspan 0 spans the rest of the table)."""
    value = _number(cell.get(attribute))
    if value is None or value < 0:
        return 1
    return min(value, most) if value else most


def _number(value: str | None, default: int | None = None) -> int | None:
    """An attribute's whole number in ASCII digits ("²" and "--3" are none), else `default`."""
    value = (value or "").strip()
    return int(value) if _INTEGER.fullmatch(value) else default


def _nested_blocks(item):
    """The lists directly in a list item or description and its code blocks at any depth outside
    those lists, in order: what its one line of inline text cannot hold."""
    for child in item:
        if child.tag in ("ul", "ol", "pre"):
            yield child
        elif child.tag not in ("dl", "table"):
            yield from (pre for pre in _nested_blocks(child) if pre.tag == "pre")


def _holds_block(element) -> bool:
    """Whether element is, or holds, a block of text of its own (not a div around a title's words)."""
    return element.tag in _TEXT_BLOCKS or any(e.tag in _TEXT_BLOCKS for e in element.iterdescendants())


def _raw(element) -> list[str]:
    """Text as written (a code block keeps its spaces and line breaks), `<br>` as a line break."""
    parts = [element.text or ""]
    for child in element:
        parts += ["\n"] if child.tag == "br" else _raw(child)
        parts.append(child.tail or "")
    return parts


# A cell of a data table holds a value or a sentence or two; a layout table's cells hold the page.
_LAYOUT_CELL_WORDS = 60
_CELL_PARTS = {*_TEXT_BLOCKS, "tr", "td", "th", "li", "dt", "dd", "div"}


def _cell_text(cell) -> str:
    """A data table's cell on one line: the blocks and cells of a table nested in it (which a
    Markdown table cannot hold) as words apart."""
    if not any(e.tag in _CELL_PARTS for e in cell.iterdescendants()):
        return text_of(cell)
    spaced = deepcopy(cell)
    for part in spaced.iterdescendants():
        if part.tag in _CELL_PARTS:
            part.text, part.tail = f" {part.text or ''}", f" {part.tail or ''}"
    return text_of(spaced)


def _is_layout(table) -> bool:
    """A table used for page layout: marked so; one whose cells hold the page rather than values
    (more words in a cell than a value has); or a frame, a single row or column around headings,
    tables or several blocks in a cell. A grid of short cells stays a data table even with a
    heading, paragraphs or a small table in a cell (written into the cell as text)."""
    if (table.get("role") or "").lower() in ("presentation", "none"):
        return True
    rows = table.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
    cells = [cell for row in rows for cell in row.xpath("./th|./td")]
    if any(len(" ".join(cell.itertext()).split()) > _LAYOUT_CELL_WORDS for cell in cells):
        return True
    if len(rows) >= 2 and max(len(row.xpath("./th|./td")) for row in rows) >= 2:
        return False
    return any(e.tag in HEADINGS or e.tag == "table" for e in table.iterdescendants()) or any(
        sum(child.tag in _TEXT_BLOCKS or (child.tag == "div" and _holds_block(child)) for child in cell) > 1
        for cell in cells
    )
