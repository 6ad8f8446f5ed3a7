"""A Word body's blocks, in order, read from its XML (ADR 0100).

python-docx's block iteration sees only the body's own paragraphs and
tables: a table inside a content control (w:sdt), custom XML or a text box,
and a table inside a table cell never reach it (one real file lost 91% of
its words that way). This reader walks the XML itself:

- w:sdt and w:customXml at block, row and cell level: their content is
  read where it stands (and counted: the reader says text was in controls);
- text boxes: their paragraphs and tables are read after the paragraph
  they are anchored in;
- tables: a grid of w:gridBefore, w:gridSpan and w:vMerge, so a merged
  cell keeps its column and a cell's text repeats over the columns and rows
  it spans; a cell's paragraphs, list items (with their markers) and nested
  tables are its text, one line; a 1x1 table is a frame, not a table, and its
  content is read as blocks;
- numbered paragraphs carry the label Word shows ("1.2.", "a)"), numbered
  headings too ("2.1 Results").

Page headers and footers live in their own parts and are never read into
the body.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from services.ingest.readers.docx_inline import W, read_inline
from services.ingest.readers.docx_numbering import Numbering
from services.ingest.readers.docx_styles import Styles, heading_level, num_pr, paragraph_style_id
from services.ingest.readers.markdown import markdown_table

_ORDERED_MARKER = re.compile(r"^\d{1,9}[.)]$")


def _w(name: str) -> str:
    return f"{{{W}}}{name}"


@dataclass
class Entry:
    kind: str  # heading, paragraph, item, table, code
    text: str = ""
    level: int = 0  # heading level; an item's depth
    marker: str = ""  # an item's "-" or "3."
    lines: list[str] = field(default_factory=list)  # a table's Markdown lines
    rows: list[list[str]] = field(default_factory=list)  # a table's cell texts
    raw: str = ""  # a paragraph's text as typed, set where all of it is in a monospaced font
    font: str = ""  # that font


class BodyReader:
    def __init__(self, document) -> None:
        self.styles = Styles(document)
        try:
            numbering = document.part.numbering_part.element
        except (NotImplementedError, KeyError):
            numbering = None
        self.numbering = Numbering(numbering)
        self.counts: Counter = Counter()
        self.unresolved: set[str] = set()
        self.entries: list[Entry] = []
        self._style_counter = 0  # "List Number" paragraphs without numbering of their own
        # The footnotes and endnotes referred to, ("footnote", w:id) -> number, in the order referred to.
        self.notes: dict[tuple[str, str], int] = {}

    def read(self, container) -> list[Entry]:
        """The entries of a container's blocks, appended to nothing else."""
        saved, self.entries = self.entries, []
        self.blocks(container)
        entries, self.entries = self.entries, saved
        return entries

    def blocks(self, container) -> None:
        for child in container:
            tag = child.tag
            if tag == _w("p"):
                self.paragraph(child)
            elif tag == _w("tbl"):
                self.table(child)
            elif tag == _w("sdt"):
                self._content_control(child, self.blocks)
            elif tag in (_w("customXml"), _w("ins"), _w("moveTo")):
                self.blocks(child)
            elif tag == _w("altChunk"):
                self.counts["embedded documents"] += 1

    def _content_control(self, sdt, read) -> None:
        content = sdt.find(_w("sdtContent"))
        if content is None:
            return
        if _has_text(content):
            self.counts["content controls"] += 1
        read(content)

    def note_mark(self, kind: str, note_id: str) -> str:
        """A note's mark where the text refers to it, as Markdown writes one: "[^3]", footnotes
        and endnotes numbered together in the order they are referred to."""
        return f"[^{self.notes.setdefault((kind, note_id), len(self.notes) + 1)}]"

    def paragraph(self, p) -> None:
        inline = read_inline(p, self.note_mark)
        self.counts += inline.counts
        text = inline.text()
        if text:
            meaning = self.styles.resolve(paragraph_style_id(p))
            if meaning.code and heading_level(p, self.styles) is None:
                self.entries.append(Entry("code", inline.raw(), raw=inline.raw()))
            else:
                self._text_block(p, text)
                if self.entries[-1].kind == "paragraph" and inline.monospaced == inline.letters:
                    self.entries[-1].raw, self.entries[-1].font = inline.raw(), inline.font
        for latex in inline.display_math:
            self.entries.append(Entry("paragraph", f"$${latex}$$"))
        for box in inline.boxes:
            self.blocks(box)

    def _text_block(self, p, text: str) -> None:
        level = heading_level(p, self.styles)
        meaning = self.styles.resolve(paragraph_style_id(p))
        numbering = num_pr(p) or meaning.numbering
        label = self._label(numbering) if numbering and numbering[0] else None
        if level is not None:
            self.entries.append(Entry("heading", f"{label} {text}" if label else text, level))
            return
        if numbering is None and not meaning.named("list"):
            self._style_counter = 0
            self.entries.append(Entry("paragraph", text))
            return
        depth = numbering[1] or 0 if numbering else 0
        if label is None and meaning.named("number"):
            self._style_counter += 1
            label = f"{self._style_counter}."
        if label and _ORDERED_MARKER.match(label):
            self.entries.append(Entry("item", text, depth, label))
        else:
            self.entries.append(Entry("item", f"{label} {text}" if label else text, depth, "-"))

    def _label(self, numbering: tuple[int | None, int | None]) -> str | None:
        """The paragraph's number ("" for a bullet); None when numId 0 switches numbering off
        or the definition is missing (said in the log and the warnings)."""
        num_id, ilvl = numbering
        if num_id == 0:
            return None
        label = self.numbering.label(num_id, ilvl or 0)
        if label is None:
            self.unresolved.add(str(num_id))
        return label

    def table(self, tbl) -> None:
        grid = self._grid(tbl)
        if len(grid) == 1 and len(grid[0]) == 1:
            # A 1x1 table is a frame around content (a boxed note, a layout cell): read it as blocks.
            self.entries += grid[0][0]
            return
        rows = [[_cell_text(cell) for cell in row] for row in grid]
        self.counts["nested tables"] += len({id(e) for row in grid for cell in row for e in cell if e.kind == "table"})
        lines = markdown_table(rows)
        if lines:
            self.entries.append(Entry("table", lines=lines, rows=rows))

    def _rows(self, tbl):
        return self._inside_controls(tbl, _w("tr"))

    def _cells(self, tr):
        return self._inside_controls(tr, _w("tc"))

    def _inside_controls(self, container, tag: str):
        """The container's children of one tag (rows of a table, cells of a row), those wrapped in
        content controls or custom XML included, in order."""
        for child in container:
            if child.tag == tag:
                yield child
            elif child.tag in (_w("sdt"), _w("customXml")):
                content = child.find(_w("sdtContent")) if child.tag == _w("sdt") else child
                if content is not None:
                    if child.tag == _w("sdt"):
                        self.counts["content controls"] += 1 if _has_text(content) else 0
                    yield from self._inside_controls(content, tag)

    def _grid(self, tbl) -> list[list[list[Entry]]]:
        """Each row's cells as entries, one per grid column: spans repeat, vertical merges
        take the entries of the cell above."""
        grid: list[list[list[Entry]]] = []
        for tr in self._rows(tbl):
            row: list[list[Entry]] = [[] for _ in range(_int_prop(tr, "trPr", "gridBefore"))]
            for tc in self._cells(tr):
                span = max(1, _int_prop(tc, "tcPr", "gridSpan"))
                column = len(row)
                if _continues_merge(tc) and grid and column < len(grid[-1]):
                    entries = grid[-1][column]
                else:
                    entries = self.read(tc)
                row += [entries] * span
            grid.append(row)
        return grid


# What marks a monospaced line as code rather than prose set in a typewriter face.
_CODE_SIGNS = re.compile(r"[=;{}()\[\]<>]|^\s*(?:def|class|import|from|return|select|insert|update|#include)\b", re.I)


def code_blocks(entries: list[Entry]) -> list[Entry]:
    """Consecutive code lines as one code block: a code style's paragraphs, and runs of
    paragraphs set wholly in one monospaced font of which a line looks like code (`=`, `;`,
    brackets, a keyword); a monospaced run without any stays prose (a typewriter face)."""
    out: list[Entry] = []
    run: list[Entry] = []

    def flush() -> None:
        if run and (any(e.kind == "code" for e in run) or any(_CODE_SIGNS.search(e.raw) for e in run)):
            lines = "\n".join(e.raw for e in run)
            out.append(Entry("code", lines, raw=lines))
        else:
            out.extend(run)
        run.clear()

    for entry in entries:
        if entry.kind == "code" or (entry.kind == "paragraph" and entry.raw):
            if run and entry.font != run[-1].font:
                flush()
            run.append(entry)
        else:
            flush()
            out.append(entry)
    flush()
    return out


def _has_text(element) -> bool:
    return any((t.text or "").strip() for t in element.iter(_w("t")))


def _int_prop(element, props: str, name: str) -> int:
    pr = element.find(_w(props))
    child = pr.find(_w(name)) if pr is not None else None
    try:
        return int(child.get(_w("val"))) if child is not None else 0
    except (TypeError, ValueError):
        return 0


def _continues_merge(tc) -> bool:
    pr = tc.find(_w("tcPr"))
    merge = pr.find(_w("vMerge")) if pr is not None else None
    return merge is not None and merge.get(_w("val"), "continue") == "continue"


def _cell_text(entries: list[Entry]) -> str:
    """A cell's blocks as one line: list items keep their markers, a nested table its cells."""
    parts = []
    for entry in entries:
        if entry.kind == "item":
            parts.append(f"{entry.marker} {entry.text}")
        elif entry.kind == "table":
            parts += [cell for row in entry.rows for cell in row if cell]
        else:
            parts.append(entry.text)
    return " ".join(parts)
