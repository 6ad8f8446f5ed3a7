"""The selected document's parse report (issue 28, ADR 0106): pages, headings, paragraphs,
tables, list items and code blocks its reader found, how it read it, and its warnings in amber,
shown under the list where the document is chosen and atop its boundaries; and the short
warning an upload's status line carries when the new document's report has warnings."""

from __future__ import annotations

from chunklab.v1 import documents_pb2
from chunklab.views.render import render

PARTS = ("pages", "headings", "paragraphs", "tables", "list items", "code blocks")


def counts(report: documents_pb2.ParseReport) -> list[tuple[str, int, str]]:
    """(part, count, label) of each part the report counts ("1 table", "3 tables"); pages only
    for a paged document."""
    values = (report.pages, report.headings, report.paragraphs, report.tables, report.list_items, report.code_blocks)
    return [
        (part, value, part[:-1] if value == 1 else part)
        for part, value in zip(PARTS, values)
        if part != "pages" or value
    ]


def report_html(document: documents_pb2.Document) -> str:
    report = document.parse_report
    return render(
        "frontend",
        "parse_report.html.j2",
        document_id=document.document_id,
        name=document.name,
        reader=report.reader,
        counts=counts(report),
        warnings=list(report.warnings),
        has_report=document.HasField("parse_report"),
    )


def upload_warning(document: documents_pb2.Document) -> str:
    """One sentence after "Uploaded …" when the reader warned: how many, and the first."""
    warnings = list(document.parse_report.warnings)
    if not warnings:
        return ""
    more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
    return f"⚠ Read with warnings: {warnings[0]}{more}. See the parse report under Documents."
