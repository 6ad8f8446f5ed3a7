"""The selected document's parse report on the Documents page, and the upload's warning line
(frontend/pages/documents/parse_report.py): what a user reads, parsed back from the HTML."""

from __future__ import annotations

from lxml import html

from chunklab.v1 import documents_pb2 as pb
from frontend.pages.documents.parse_report import report_html, upload_warning
from services.ingest.readers.markdown import parse
from services.ingest.report import count_parts

MANUAL = """# Pump manual

Read this first.

## Parts

- Impeller
- Housing

| Part | Code |
|---|---|
| Seal | S-1 |

```
pump --start
```
"""


def pdf_document(warnings: list[str]) -> pb.Document:
    report = pb.ParseReport(pages=12, headings=8, paragraphs=40, tables=3, list_items=5, reader="PDFium")
    report.warnings.extend(warnings)
    return pb.Document(document_id="d-1", name="manual.pdf", parse_report=report)


def test_the_report_shows_each_count_and_every_warning_in_the_amber_box():
    shown = html.fromstring(
        report_html(pdf_document(["2 tables could not be read (p. 4, 7)", "3 pages have no text (p. 2, 5, 9)"]))
    )
    counts = {li.get("data-part"): li.text_content().strip() for li in shown.xpath("//li[@data-part]")}
    assert counts == {
        "pages": "12 pages",
        "headings": "8 headings",
        "paragraphs": "40 paragraphs",
        "tables": "3 tables",
        "list items": "5 list items",
        "code blocks": "0 code blocks",
    }
    box = shown.xpath("//div[@class='cl-warnings']")[0]
    assert box.get("role") == "alert" and "2 warnings" in box.text_content()
    assert [li.text_content() for li in box.xpath(".//li")] == [
        "2 tables could not be read (p. 4, 7)",
        "3 pages have no text (p. 2, 5, 9)",
    ]
    assert "read with PDFium" in shown.text_content()


def test_a_document_without_pages_or_warnings_shows_neither():
    report = count_parts(parse(MANUAL, pb.DOCUMENT_FORMAT_MARKDOWN))
    shown = html.fromstring(report_html(pb.Document(name="manual.md", parse_report=report)))
    counts = [li.text_content().strip() for li in shown.xpath("//li[@data-part]")]
    assert counts == ["2 headings", "1 paragraph", "1 table", "2 list items", "1 code block"]
    assert not shown.xpath("//div[@class='cl-warnings']")
    assert "nothing it could not read" in shown.text_content()


def test_an_upload_with_warnings_says_the_first_and_how_many_more():
    assert upload_warning(pdf_document([])) == ""
    assert upload_warning(pdf_document(["2 tables could not be read (p. 4, 7)", "3 pages have no text"])) == (
        "⚠ Read with warnings: 2 tables could not be read (p. 4, 7) (and 1 more). See the parse report under Documents."
    )
