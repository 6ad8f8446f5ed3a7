"""A real PDF on the Documents page (issue 28, items 4 and 7's page numbers): uploaded through the
UI, its parse report shown where the document is chosen and atop its boundaries (pages, headings,
how it was read), and its boundaries drawn with the page each part of the text is on.

The PDF is docling's five-page multi_page.pdf from the dev set (../shared/data/real-docs/)."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import SECONDS, choose, documents_part, screenshot
from tests.support.repo import REPO

pytestmark = pytest.mark.browser

REAL_PDF = REPO.parent / "shared" / "data" / "real-docs" / "pdf" / "multi_page.pdf"


def count_of(report, part: str) -> int:
    return int(report.locator(f"li[data-part='{part}'] .cl-n").inner_text().replace(",", ""))


def test_a_real_pdf_shows_its_parse_report_and_its_boundaries_with_page_numbers(page):
    from playwright.sync_api import expect

    if not REAL_PDF.is_file():
        pytest.skip(f"needs the dev set's {REAL_PDF}: put the shared data folder beside the repository")
    page.locator("#upload-file input[type=file]").set_input_files(str(REAL_PDF))
    page.locator('#upload-file a[href$="/multi_page.pdf"]').wait_for()
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("Uploaded multi_page.pdf")

    # Under the chosen document: its report, read back as a user reads it.
    report = page.locator("#document-report .cl-parse-report")
    expect(report).to_contain_text("Parse report: multi_page.pdf")
    expect(report.locator("li[data-part=pages]")).to_have_text("5 pages")
    assert count_of(report, "headings") >= 3 and count_of(report, "paragraphs") >= 10
    expect(report).to_contain_text("read with PDFium")
    warnings = report.locator(".cl-parse-warning").all_inner_texts()
    if warnings:  # in amber, each a sentence
        expect(report.locator(".cl-warnings")).to_be_visible()
    else:
        expect(report.locator(".cl-parse-clean")).to_have_text("The reader reports nothing it could not read.")
    report.scroll_into_view_if_needed()
    screenshot(page, "parse-report-real-pdf")

    # The boundaries of the same document: its report atop them, each page marked where it begins
    # and each chunk's label naming its page.
    documents_part(page, "Boundaries")
    expect(page.locator("#documents-boundaries-selected")).to_contain_text("multi_page.pdf")
    expect(page.locator("#boundaries-report li[data-part=pages]")).to_have_text("5 pages")
    page.locator("#viewer-right-source").get_by_text("Nothing (one column)", exact=True).click()
    choose(page, "viewer-left-strategy", "recursive")
    page.locator("#viewer-left-knob-recursive-chunk_size input").wait_for()  # the form drawn for it
    page.locator("#viewer-button").click()
    view = page.locator("#viewer .cl-boundaries")
    view.wait_for(timeout=60 * SECONDS)
    expect(view.locator(".cl-bpage")).to_have_text([f"p. {n}" for n in range(1, 6)])
    labels = view.locator(".cl-bmark").all_inner_texts()
    assert labels and all(re.search(r" · pp?\. \d", label) for label in labels)
    # "p. 3" or "pp. 1–2": together the chunks' labels name every page.
    named = set()
    for label in labels:
        first, last = re.search(r"pp?\. (\d+)(?:\u2013(\d+))?", label).groups()
        named |= set(range(int(first), int(last or first) + 1))
    assert named == {1, 2, 3, 4, 5}
    view.locator(".cl-bpage").nth(1).scroll_into_view_if_needed()
    screenshot(page, "boundaries-real-pdf-pages")
