"""DOCX into canonical text and a DocumentTree, through python-docx.

The canonical text is a Markdown rendering of the document: headings as
`#` lines (Title is level 1, `Heading n` and outline level n follow it),
paragraphs as text, list items as `- ` or `1. ` lines, tables as Markdown
tables; blocks are separated by a blank line. Every node's range points
into that rendering. Empty paragraphs are dropped.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

import docx
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.markdown import Writer, build_tree, markdown_table

log = logging.getLogger("chunklab.ingest.docx")

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_CORE_FIELDS = ("title", "author", "subject", "keywords", "category", "comments", "last_modified_by")


@dataclass
class DocxContent:
    text: str
    tree: pb.DocumentTree
    metadata: dict[str, str] = field(default_factory=dict)
    created: datetime | None = None


def _outline_level(element) -> int | None:
    """w:outlineLvl as a heading level (0 -> 1), None for body text (9) or none."""
    ppr = element.find(qn("w:pPr")) if element is not None else None
    level = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
    if level is None:
        return None
    value = int(level.get(qn("w:val"), "9"))
    return value + 1 if value < 9 else None


class _Styles:
    """What a paragraph style means for the tree, resolved once per style.

    python-docx looks a paragraph's style up by scanning every style, per
    paragraph; a 100-page document spent most of its parse there.
    """

    def __init__(self, document) -> None:
        self._by_id = {style.style_id: style for style in document.styles if style.style_id}
        default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._default_id = default.style_id if default is not None else None
        self._cache: dict[str | None, tuple[int | None, str]] = {}

    def resolve(self, style_id: str | None) -> tuple[int | None, str]:
        """(heading level or None, lower-case names of the style and its bases)."""
        style_id = style_id or self._default_id
        if style_id not in self._cache:
            level, names = None, []
            style = self._by_id.get(style_id)
            while style is not None:
                name = (style.name or "").lower()
                names.append(name)
                if level is None:
                    match = _HEADING_STYLE.match(name)
                    if name == "title":
                        level = 0
                    elif match:
                        level = int(match.group(1))
                    else:
                        outline = _outline_level(style.element)
                        level = outline if outline is not None else None
                style = style.base_style
            self._cache[style_id] = (level, " ".join(names))
        return self._cache[style_id]


def heading_level(paragraph: Paragraph, styles: _Styles) -> int | None:
    """1 for Title; n + 1 for `Heading n` or w:outlineLvl n - 1; None for body text."""
    level = _outline_level(paragraph._p)
    if level is not None:
        return level + 1
    level, _ = styles.resolve(paragraph._p.style)
    return None if level is None else level + 1


def _numbering_format(paragraph: Paragraph, styles: _Styles, unresolved: set[str]) -> str | None:
    """'bullet', 'number', or None when the paragraph is not in a list. A list
    whose numbering definition cannot be read is shown as bullets, and its
    numId is added to `unresolved` so that the reader says so."""
    _, names = styles.resolve(paragraph._p.style)
    ppr = paragraph._p.pPr
    num_pr = ppr.numPr if ppr is not None else None
    if num_pr is None and "list" not in names:
        return None
    if "number" in names:
        return "number"
    if num_pr is not None and num_pr.numId is not None:
        try:
            if _numbered(paragraph, num_pr):
                return "number"
        except (KeyError, AttributeError, NotImplementedError, ValueError):
            # No numbering part, a numId it does not define, a level that is no number.
            unresolved.add(str(num_pr.numId.get(qn("w:val"))))
    return "bullet"


def _numbered(paragraph: Paragraph, num_pr) -> bool:
    """Whether the numbering definition the paragraph names counts (1., 2., ...) at its level."""
    numbering = paragraph.part.numbering_part.element
    ilvl = num_pr.ilvl.val if num_pr.ilvl is not None else 0
    abstract_id = numbering.num_having_numId(num_pr.numId.val).abstractNumId.val
    for abstract in numbering.findall(qn("w:abstractNum")):
        if int(abstract.get(qn("w:abstractNumId"))) == abstract_id:
            for lvl in abstract.findall(qn("w:lvl")):
                if int(lvl.get(qn("w:ilvl"))) == ilvl:
                    fmt = lvl.find(qn("w:numFmt"))
                    if fmt is not None and fmt.get(qn("w:val")) not in ("bullet", "none"):
                        return True
    return False


def _table_lines(table: Table) -> list[str]:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            # Merged cells repeat the same cell object; keep it once.
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(cell.text)
        rows.append(cells)
    return markdown_table(rows)


def _entries(document) -> list[tuple[str, object, str]]:
    """(kind, payload, list format) per non-empty block, in body order."""
    entries = []
    styles = _Styles(document)
    unresolved: set[str] = set()
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            lines = _table_lines(item)
            if lines:
                entries.append(("table", lines, ""))
            continue
        text = " ".join(item.text.split())
        if not text:
            continue
        level = heading_level(item, styles)
        if level is not None:
            entries.append(("heading", (level, text), ""))
            continue
        fmt = _numbering_format(item, styles, unresolved)
        entries.append(("paragraph", text, "") if fmt is None else ("item", text, fmt))
    if unresolved:
        log.warning(
            "DOCX lists with numbering definitions that cannot be read (numId %s) are shown as bullets",
            ", ".join(sorted(unresolved)),
        )
    return entries


def read_docx(data: bytes) -> DocxContent:
    document = docx.Document(io.BytesIO(data))
    entries = _entries(document)
    # Title is level 1 when the document has one; otherwise Heading 1 is.
    has_title = any(kind == "heading" and payload[0] == 1 for kind, payload, _ in entries)
    shift = 0 if has_title else 1
    writer = Writer()
    previous_format = ""
    counter = 0
    for kind, payload, fmt in entries:
        if kind == "heading":
            level, title = payload
            writer.heading(max(1, level - shift), title)
        elif kind == "table":
            writer.table(payload)
        elif kind == "paragraph":
            writer.paragraph(payload)
        else:
            continues = fmt == previous_format
            counter = counter + 1 if continues else 1
            writer.list_item(payload, f"{counter}." if fmt == "number" else "-", continues=continues)
        previous_format = fmt

    text = writer.text()
    props = document.core_properties
    metadata = {f: str(getattr(props, f)) for f in _CORE_FIELDS if getattr(props, f, None)}
    created = props.created
    if created is not None and created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return DocxContent(text=text, tree=build_tree(text, writer.blocks), metadata=metadata, created=created)
