"""DOCX into canonical text and a DocumentTree.

The canonical text is a Markdown rendering of the document: headings as
`#` lines (Title is level 1, `Heading n` and outline level n follow it),
paragraphs as text, list items as `- ` or `1. ` lines (nested ones
indented), tables as Markdown tables, code (a code style, or monospaced lines that
look like code) as fenced blocks, equations as LaTeX between `$`
(`$$` for one on its own line); blocks are separated by a blank line.
Every node's range points into that rendering. Empty paragraphs are
dropped.

python-docx opens the package (styles, numbering, core properties); the
body's blocks are read from its XML by docx_body.py, which sees what
python-docx does not (content controls, text boxes, nested tables,
equations). What the reader could not read, or read by a guess, becomes a
warning (ADR 0100).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import parse_xml
from docx.oxml.ns import qn

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.docx_body import BodyReader, Entry, code_blocks
from services.ingest.readers.markdown import Writer, build_tree

log = logging.getLogger("chunklab.ingest.docx")

_CORE_FIELDS = ("title", "author", "subject", "keywords", "category", "comments", "last_modified_by")
_INDENT = "   "  # one nesting level of a list item: enough for "- " and "1. " alike
_NOTE_PARTS = {"footnote": RT.FOOTNOTES, "endnote": RT.ENDNOTES}


@dataclass
class DocxContent:
    text: str
    tree: pb.DocumentTree
    metadata: dict[str, str] = field(default_factory=dict)
    created: datetime | None = None
    warnings: list[str] = field(default_factory=list)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def warnings_for(reader: BodyReader, comments: int = 0) -> list[str]:
    """What the body reader read by a guess or left out, as sentences a person can act on."""
    counts, out = reader.counts, []
    if comments:
        out.append(
            f"{_plural(comments, 'comment', 'comments')} in the margin (reviewers' notes) "
            f"{'was' if comments == 1 else 'were'} left out: only the document's own text is read"
        )
    if counts["content controls"]:
        n = counts["content controls"]
        out.append(f"text in {_plural(n, 'content control', 'content controls')} was read as ordinary text")
    if counts["text boxes"]:
        n = counts["text boxes"]
        out.append(
            f"text in {_plural(n, 'text box', 'text boxes')} was read after the paragraph each is anchored "
            "in: check its place in the reading order"
        )
    if counts["nested tables"]:
        n = counts["nested tables"]
        out.append(
            f"{_plural(n, 'table inside a table cell was', 'tables inside table cells were')} written into "
            "the cell as text"
        )
    if reader.unresolved:
        out.append(
            "lists whose numbering definitions cannot be read (numId "
            f"{', '.join(sorted(reader.unresolved))}) are shown as bullets"
        )
    if counts["pictures"]:
        out.append(f"{_plural(counts['pictures'], 'picture was', 'pictures were')} left out: only text is read")
    skipped = counts["embedded objects"] + counts["embedded documents"]
    if skipped:
        out.append(
            f"{_plural(skipped, 'embedded object (chart, spreadsheet or document) was', 'embedded objects (charts, spreadsheets or documents) were')} "
            "left out: save its content into the document as text or a table"
        )
    return out


def _write(entries: list[Entry]) -> Writer:
    # Title is level 1 when the document has one; otherwise Heading 1 is.
    has_title = any(e.kind == "heading" and e.level == 1 for e in entries)
    shift = 0 if has_title else 1
    writer = Writer()
    previous: Entry | None = None
    for entry in entries:
        if entry.kind == "heading":
            writer.heading(max(1, entry.level - shift), entry.text)
        elif entry.kind == "table":
            writer.table(entry.lines)
        elif entry.kind == "paragraph":
            writer.paragraph(entry.text)
        elif entry.kind == "code":
            writer.code(entry.text)
        else:
            continues = previous is not None and previous.kind == "item" and not _new_list(previous, entry)
            writer.list_item(entry.text, _INDENT * entry.level + entry.marker, continues=continues)
        previous = entry
    return writer


def _new_list(previous: Entry, entry: Entry) -> bool:
    """A top-level bullet after a top-level number (or the reverse) starts a list of its own."""
    return previous.level == entry.level == 0 and (previous.marker == "-") != (entry.marker == "-")


def read_docx(data: bytes) -> DocxContent:
    document = docx.Document(io.BytesIO(data))
    reader = BodyReader(document)
    reader.blocks(document.element.body)
    _read_notes(document, reader)
    if reader.unresolved:
        log.warning(
            "DOCX lists with numbering definitions that cannot be read (numId %s) are shown as bullets",
            ", ".join(sorted(reader.unresolved)),
        )
    writer = _write(code_blocks(reader.entries))
    text = writer.text()
    props = document.core_properties
    metadata = {f: str(getattr(props, f)) for f in _CORE_FIELDS if getattr(props, f, None)}
    created = props.created
    if created is not None and created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    tree = build_tree(text, writer.blocks)
    comments = _part_xml(document, RT.COMMENTS)
    count = 0 if comments is None else sum(1 for _ in comments.iter(qn("w:comment")))
    return DocxContent(text, tree, metadata, created, warnings_for(reader, count))


def _part_xml(document, reltype: str):
    """The root element of the package part the document relates to by `reltype`, or None."""
    try:
        return parse_xml(document.part.part_related_by(reltype).blob)
    except KeyError:
        return None


def _read_notes(document, reader: BodyReader) -> None:
    """The footnotes and endnotes the text refers to, after the body in the order they are referred
    to, each opening with its mark as Markdown defines a note ("[^3]: ..."), as the text refers to
    it ("...the harbour[^3]"); a note referred to in a note comes after them (ADR 0170)."""
    notes = {}
    for kind, reltype in _NOTE_PARTS.items():
        root = _part_xml(document, reltype)
        if root is not None:
            notes |= {(kind, note.get(qn("w:id"))): note for note in root.iter(qn(f"w:{kind}"))}
    done = 0
    while done < len(reader.notes):  # reading a note can refer to more
        batch = list(reader.notes.items())[done:]
        done = len(reader.notes)
        for key, number in batch:
            if key not in notes:
                continue
            entries = reader.read(notes[key])
            first = next((e for e in entries if e.kind == "paragraph"), None)
            if first is None:
                entries.insert(0, first := Entry("paragraph", ""))
            first.text = f"[^{number}]: {first.text}".rstrip()
            reader.entries += entries
