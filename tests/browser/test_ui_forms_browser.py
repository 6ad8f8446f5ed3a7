"""Forms that guide, in a real browser (issue 27 item 6; ADR 0089, ADR 0090): a chunk size the
chunker would refuse is named beside its field, in the form's words, and the note stays until
the value is fixed, while the status no longer shows the last run's "Completed"; chunk_size=8 is
warned about and its set is indexed beside the active one unless the user ticks consent; top_k 0
is refused with its default named; a refused upload names the file and keeps the selected
document with its index sets and boundary view."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import SECONDS, choose, documents_part, enter, screenshot
from tests.support.hand_pdfs import text_pdf

pytestmark = pytest.mark.browser

QUESTION = "Which flags meant a hurricane?"


def select_storms(page) -> None:
    """Chooses storms.md under Upload and list and opens Process, ready to press it."""
    from playwright.sync_api import expect

    documents_part(page, "Upload and list")
    choose(page, "document-select", re.compile(r"^storms\.md · "))
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^storms\.md · "))
    documents_part(page, "Process")
    expect(page.locator("#documents-process-selected")).to_contain_text("Selected document: storms.md · ")
    expect(page.locator("#process-button")).to_be_enabled()


def process(page):
    """Presses Process and waits for the run to complete; returns the status locator."""
    from playwright.sync_api import expect

    page.locator("#process-button").click()
    status = page.locator("#process-status")
    expect(status.locator(".cl-completed > b")).to_have_text("Completed", timeout=120 * SECONDS)
    return status


def test_a_bad_chunk_size_is_named_beside_its_field_until_fixed_and_a_tiny_one_is_warned(page, storms):
    from playwright.sync_api import expect

    select_storms(page)
    size = page.locator("#knob-fixed_size-chunk_size input")
    overlap = page.locator("#knob-fixed_size-chunk_overlap input")
    notes = page.locator("#knob-notes-fixed_size")
    status = page.locator("#process-status")
    # A run that succeeds first, so that a stale "Completed" would show.
    enter(size, "256")
    enter(overlap, "0")
    process(page)
    active = page.locator("#indexed-sets tr[data-strategy=fixed_size][data-active=true] td")
    documents_part(page, "Index sets and export")
    expect(active.nth(1)).to_have_text("chunk_overlap=0, chunk_size=256")
    documents_part(page, "Process")

    # 1.5 tokens: the form names the field, in its words, beside it; nothing is sent.
    size.fill("1.5")
    expect(notes.locator("[data-knob=chunk_size]")).to_have_text("chunk_size takes a whole number; you entered 1.5.")
    page.locator("#process-button").click()
    expect(status).to_contain_text("Not processed: fix the values marked under the strategies above.")
    expect(status).not_to_contain_text("Completed")
    # Gradio's own refusal ("Value 1.5 is less than minimum value 8.0.") never shows.
    expect(page.locator("body")).not_to_contain_text("minimum value")
    # The note stays after the refusal, until the value changes.
    expect(notes.locator("[data-knob=chunk_size]")).to_have_text("chunk_size takes a whole number; you entered 1.5.")
    screenshot(page, "forms-chunk-size-named-beside-its-field")

    size.fill("4")
    expect(notes.locator("[data-knob=chunk_size]")).to_have_text("chunk_size must be at least 8 tokens; you entered 4.")
    # chunk_size=8 is allowed but warned about, and consent is asked for.
    size.fill("8")
    warning = notes.locator(".cl-field-warning[data-knob=chunk_size]")
    expect(warning).to_contain_text("Warning: chunk_size 8 is below 32 tokens")
    anyway = page.locator("#process-activate-anyway input")
    expect(anyway).to_be_visible()
    expect(anyway).not_to_be_checked()
    process(page)
    expect(status).to_contain_text("Indexed beside the active sets, which stay as they were: fixed_size chunk_size=8")
    expect(warning).to_be_visible()  # still said: the value is still 8
    screenshot(page, "forms-chunk-size-8-warned-and-kept-inactive")
    # The set of 8 is there, and the active one is still the set of 256.
    documents_part(page, "Index sets and export")
    expect(page.locator("#indexed-sets")).to_contain_text("chunk_overlap=0, chunk_size=8")
    expect(active.nth(1)).to_have_text("chunk_overlap=0, chunk_size=256")
    screenshot(page, "forms-chunk-size-8-indexed-beside-the-active-set")

    # With consent, the set of 8 becomes the active one.
    documents_part(page, "Process")
    anyway.check()
    process(page)
    expect(status).not_to_contain_text("Indexed beside")
    documents_part(page, "Index sets and export")
    expect(active.nth(1)).to_have_text("chunk_overlap=0, chunk_size=8")

    # A sensible value clears the notes and the consent box.
    documents_part(page, "Process")
    size.fill("256")
    expect(notes.locator("li")).to_have_count(0)
    expect(anyway).to_be_hidden()


def test_top_k_0_is_refused_with_its_default_named(page, storms):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Query").click()
    page.locator("#query-text textarea").fill(QUESTION)
    top_k = page.locator("#query-top-k")
    expect(top_k).to_contain_text("empty = the default, 5")  # said under the box once the limits are read
    top_k.locator("input").fill("0")
    page.locator("#ask-button").click()
    # The Query page says a refusal where the answer goes.
    expect(page.locator("#answer")).to_contain_text(
        "top_k must be between 1 and 100, got 0; leave it empty for the default, 5."
    )
    expect(page.locator("body")).not_to_contain_text("minimum value")
    screenshot(page, "forms-top-k-0-refused")


def test_a_refused_upload_names_the_file_and_keeps_the_selected_document_s_views(page, storms, tmp_path):
    from playwright.sync_api import expect

    select_storms(page)
    process(page)
    documents_part(page, "Index sets and export")
    sets = page.locator("#indexed-sets tr[data-strategy=fixed_size]")
    expect(sets.first).to_be_visible()
    # The boundary view drawn for it (a document other than the sample's waits for its button).
    documents_part(page, "Boundaries")
    page.locator("#viewer-button").click()
    view = page.locator("#viewer .cl-sbs")
    view.wait_for(timeout=60 * SECONDS)
    summary = page.locator("#viewer-summary")
    expect(summary.locator("[data-side=left] .cl-sbs-label")).to_contain_text("fixed_size · ")
    # The figures themselves: the component's own text also holds Gradio's "processing"
    # overlay while an event for it is pending.
    stats = summary.locator(".cl-sbs-stats")
    shown_before = stats.inner_text()

    # A PDF whose cross-reference table is missing: ingest refuses it.
    documents_part(page, "Upload and list")
    data = text_pdf(1)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(data[: data.index(b"xref")] + b"%%EOF\n")
    page.locator("#upload-file input[type=file]").set_input_files(str(broken))
    page.locator('#upload-file a[href$="/broken.pdf"]').wait_for()
    page.locator("#upload-button").click()
    said = page.locator("#upload-status")
    expect(said).to_contain_text("Not uploaded: 'broken.pdf' is a damaged PDF that cannot be read")
    expect(said).to_contain_text("its cross-reference table")
    expect(said).not_to_contain_text("PdfReadError")
    # The selection is as it was, and the list has no broken.pdf.
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^storms\.md · "))
    expect(page.locator("#documents-table")).not_to_contain_text("broken.pdf")
    screenshot(page, "forms-failed-upload-keeps-the-selection")

    # Its index sets and its boundary view are as they were.
    documents_part(page, "Index sets and export")
    expect(page.locator("#documents-sets-selected")).to_contain_text("Selected document: storms.md · ")
    expect(sets.first).to_be_visible()
    screenshot(page, "forms-failed-upload-keeps-the-index-sets")
    documents_part(page, "Boundaries")
    expect(page.locator("#documents-boundaries-selected")).to_contain_text("Selected document: storms.md · ")
    expect(stats).to_have_text(shown_before)
    expect(view).to_be_visible()
    # In the window, so that its lazily laid-out first rows are painted in the screenshot.
    view.locator(".cl-sbs-scroll").evaluate("e => e.scrollIntoView({block: 'center'})")
    expect(view.locator(".cl-sbs-text").first).to_contain_text("Storm signals")
    screenshot(page, "forms-failed-upload-keeps-the-boundary-view")
