"""A document's parse report (issue 28, ADR 0104): what the reader made of an upload, built
once here and stored with the document, so that no document loses content silently.

The counts are the tree's parts, counted in this one place (`count_parts`), for an upload as
it is read and for a document stored before reports existed (the migration ingest_0002 calls
`report_of_stored`). The warnings are the reader's own sentences (Parsed.warnings) and what a
reader left in its metadata before warnings existed (`tables_not_read`), said as a sentence.
"""

from __future__ import annotations

from collections import Counter

from chunklab.v1 import documents_pb2 as pb

# How each format's text is read (the libraries under services/ingest/readers/).
READERS = {
    pb.DOCUMENT_FORMAT_MARKDOWN: "ChunkLab's Markdown block scanner",
    pb.DOCUMENT_FORMAT_TEXT: "plain text, paragraphs at blank lines",
    pb.DOCUMENT_FORMAT_DOCX: "python-docx and the Word XML (content controls, text boxes, equations)",
    pb.DOCUMENT_FORMAT_PDF: "PDFium (text) and pdfplumber (tables)",
    pb.DOCUMENT_FORMAT_HTML: "lxml, main text chosen by trafilatura",
}
# The metadata key an older PDF reader noted its unread tables under ("p. 3 (why); p. 7 (why)").
TABLES_NOT_READ = "tables_not_read"


def count_parts(tree: pb.DocumentTree) -> pb.ParseReport:
    """The report's counts: every node of the tree by kind, and the pages of a paged document."""
    kinds: Counter[int] = Counter()
    stack = [tree.root]
    while stack:
        node = stack.pop()
        kinds[node.kind] += 1
        stack.extend(node.children)
    return pb.ParseReport(
        pages=len(tree.page_starts),
        headings=kinds[pb.NODE_KIND_HEADING],
        paragraphs=kinds[pb.NODE_KIND_PARAGRAPH],
        tables=kinds[pb.NODE_KIND_TABLE],
        list_items=kinds[pb.NODE_KIND_LIST_ITEM],
        code_blocks=kinds[pb.NODE_KIND_CODE],
    )


def tables_not_read_warning(note: str) -> str:
    """The older metadata note as a sentence a person can act on."""
    places = [part.strip() for part in note.split(";") if part.strip()]
    count = len(places)
    tables = "The tables on 1 page" if count == 1 else f"The tables on {count} pages"
    return (
        f"{tables} could not be read as tables ({'; '.join(places)}): their text is kept as "
        "paragraphs, without the table's rows and columns"
    )


def take_warnings(metadata: dict[str, str], warnings: list[str]) -> list[str]:
    """The reader's warnings, and the metadata's notes of a loss taken out of it as warnings."""
    found = list(warnings)
    note = metadata.pop(TABLES_NOT_READ, "")
    if note:
        found.append(tables_not_read_warning(note))
    return found


def build_report(fmt: int, tree: pb.DocumentTree, metadata: dict[str, str], warnings: list[str]) -> pb.ParseReport:
    """The report of one upload; takes the loss notes out of `metadata` (they become warnings)."""
    report = count_parts(tree)
    report.warnings.extend(take_warnings(metadata, warnings))
    report.reader = READERS.get(fmt, "")
    return report


def report_of_stored(fmt: int, tree_bytes: bytes, metadata: dict[str, str]) -> pb.ParseReport:
    """The report of a document stored before reports existed, from its stored tree."""
    tree = pb.DocumentTree()
    tree.ParseFromString(tree_bytes or b"")
    return build_report(fmt, tree, metadata, [])
