"""The UI in a real headless browser, driven as a user would, against the
whole stack (four services and the UI, each its own process on a free port).

One stack and one browser serve the whole module; each test opens its own
page. Documents a test only needs as a starting point are uploaded through
gRPC, as another client would; what the test is about goes through the UI.

Chromium is Debian's (`make browser`); Playwright never downloads its own.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from chunklab.knobs import to_spec
from chunklab.settings import Settings
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app import recommended, samples
from tests.support.browser import (
    DOCUMENT,
    QUESTIONS,
    SECONDS,
    STORMS,
    choose,
    documents_part,
    experiment_grids,
    fill,
    screenshot,
    upload,
)
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.browser

QUESTION = "Which fog horns warned ships in storms when the beam was hidden?"


def choose_file(page, path: Path) -> None:
    """Picks a file in the upload box and waits until Gradio holds it (its link appears)."""
    clear = page.locator("#upload-file button[aria-label=Clear]")
    if clear.count():
        clear.click()
    page.locator("#upload-file input[type=file]").set_input_files(str(path))
    # Not the shown name: Gradio splits it into stem and extension, which
    # reads as "name .md" in some layouts.
    page.locator(f'#upload-file a[href$="/{path.name}"]').wait_for()


def chunk_indices(locator) -> list[int]:
    return [int(e.get_attribute("data-chunk-index")) for e in locator.all()]


def record_answer_states(page) -> None:
    """Records every data-state the answer box shows, to tell a streamed answer from one drawn at the end."""
    page.evaluate("""() => {
        window.__answer_states = [];
        const note = () => {
            const box = document.querySelector('#answer .cl-answer');
            const state = box && box.getAttribute('data-state');
            if (state && window.__answer_states.at(-1) !== state) window.__answer_states.push(state);
        };
        new MutationObserver(note).observe(document.querySelector('#answer'),
            {subtree: true, childList: true, attributes: true, characterData: true});
    }""")


def test_upload_process_and_query_show_hits_with_their_neighbours(page, tmp_path):
    from playwright.sync_api import expect

    document = tmp_path / "lighthouses.md"
    document.write_text(DOCUMENT)

    # Nothing to process yet: Process waits for a document.
    documents_part(page, "Process")
    expect(page.locator("#process-button")).to_be_disabled()
    documents_part(page, "Upload and list")
    # Upload: the new document is reported, listed and selected, and the box is empty for the next file.
    choose_file(page, document)
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("Uploaded lighthouses.md")
    expect(page.locator("#documents-table")).to_contain_text("lighthouses.md")
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^lighthouses\.md · default · "))
    expect(page.locator('#upload-file a[href$="/lighthouses.md"]')).to_have_count(0)
    # The same bytes again are recognised, not stored twice.
    choose_file(page, document)
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("lighthouses.md was already uploaded")
    screenshot(page, "documents-table")
    # The strategy forms are drawn again with the button enabled (a render, queued behind the others).
    documents_part(page, "Process")
    expect(page.locator("#documents-process-selected")).to_contain_text("Selected document: lighthouses.md")
    expect(page.locator("#process-button")).to_be_enabled(timeout=30 * SECONDS)
    documents_part(page, "Index sets and export")
    expect(page.locator("#indexed-sets")).to_contain_text(f"Not indexed with {Settings().embedding_model} yet")
    documents_part(page, "Process")

    # Only a ticked strategy shows its knobs: the baseline's at first, recursive's once ticked.
    expect(page.locator("#knob-fixed_size-chunk_size input")).to_be_visible()
    expect(page.locator("#knob-recursive-chunk_size input")).to_be_hidden()
    page.locator("#use-recursive input").check()
    expect(page.locator("#knob-recursive-chunk_size input")).to_be_visible()
    page.locator("#use-recursive input").uncheck()
    expect(page.locator("#knob-recursive-chunk_size input")).to_be_hidden()

    # Process with fixed_size (alone: the recommendation is ticked beside it, ADR 0083) in small
    # windows so the document has many chunks.
    page.locator("#use-cluster_parent_child input").uncheck()
    page.locator("#knob-fixed_size-chunk_size input").fill("32")
    page.locator("#knob-fixed_size-chunk_overlap input").fill("0")
    page.locator("#process-button").click()
    status = page.locator("#process-status")
    expect(status.locator(".cl-completed > b")).to_have_text("Completed", timeout=60 * SECONDS)
    expect(status).to_contain_text("embeddings from the cache)")
    completed = status.locator("li[data-strategy=fixed_size]").inner_text()
    chunk_count = int(re.search(r"fixed_size: (\d+) chunks", completed).group(1))
    assert chunk_count >= 6, completed
    expect(status).not_to_contain_text("strategies_failed")
    # What is indexed now, and with which knobs: what the Query page will search.
    documents_part(page, "Index sets and export")
    indexed = page.locator("#indexed-sets tr[data-strategy=fixed_size] td")
    expect(indexed.nth(1)).to_have_text("chunk_overlap=0, chunk_size=32")
    expect(indexed.nth(3)).to_have_text(str(chunk_count))

    # Query with one neighbour on each side.
    page.get_by_role("tab", name="Query").click()
    expect(page.locator("#query-strategy input")).to_have_value("fixed_size")
    page.locator("#query-text textarea").fill(QUESTION)
    page.locator("#query-top-k input").fill("2")
    page.locator("#query-neighbor-prev input").fill("1")
    page.locator("#query-neighbor-next input").fill("1")
    record_answer_states(page)
    page.locator("#ask-button").click()
    flat = page.locator("#flat-list")
    flat.locator("[data-label=hit]").first.wait_for()

    # The answer: no LLM is configured, so it is extractive and says so; it was
    # drawn while being written (the context came first), then finished.
    answer = page.locator("#answer .cl-answer[data-state=done]")
    expect(answer).to_have_attribute("data-extractive", "true")
    expect(answer.locator(".cl-badge-extractive")).to_have_text("extractive")
    assert "warned ships" in answer.locator(".cl-answer-text").inner_text()
    assert page.evaluate("window.__answer_states")[-2:] == ["writing", "done"]
    # Thumbs up goes to the evaluator with this answer's query and shows in the tally.
    page.locator("#feedback-comment textarea").fill("found the fog horns")
    page.locator("#thumbs-up").click()
    expect(page.locator("#feedback-status")).to_contain_text("Recorded 👍 helpful for this answer (fixed_size)")
    expect(page.locator("#feedback-status tr[data-strategy=fixed_size] td").nth(1)).to_have_text("1")

    # Named in the form, an OpenAI-compatible model writes the answer, and the label says which.
    with FakeOpenAI() as llm:
        page.locator("#query-more").get_by_text("Filters, embedding model and answer model").click()
        fill(page, "answer-base-url", llm.base_url)
        fill(page, "answer-model", "fake-chat")
        page.locator("#ask-button").click()
        written = page.locator("#answer .cl-answer[data-state=done][data-extractive=false]")
        expect(written.locator(".cl-answer-head")).to_contain_text("fake-chat")
        expect(written.locator(".cl-answer-text")).to_contain_text("Reply from fake-chat about:")
        assert len(llm.calls) == 1
    expect(page.locator("#thumbs-up")).to_be_enabled()

    # (a) The flat list: hits and neighbours, each once, in document order.
    hits = chunk_indices(flat.locator("li[data-label=hit]"))
    neighbors = chunk_indices(flat.locator("li[data-label=neighbor]"))
    everything = chunk_indices(flat.locator("li[data-label]"))
    assert len(hits) == 2 and neighbors, everything
    assert everything == sorted(set(everything))
    assert set(everything) == {i for h in hits for i in (h - 1, h, h + 1) if 0 <= i < chunk_count}
    assert flat.locator("li[data-label=hit] .cl-score").count() == 2
    assert flat.locator("li[data-label=neighbor] .cl-score").count() == 0
    expect(page.locator("#retrieve-summary")).to_contain_text("2 hits")

    # (b) The tree: hits in score order, each with its own neighbours nested around it.
    nodes = page.locator("#expansion-tree li.cl-node")
    assert nodes.count() == 2
    scores, tree_hits = [], []
    for n in range(2):
        node = nodes.nth(n)
        hit = node.locator(":scope > [data-role=hit]")
        assert hit.get_attribute("data-label") == "hit"
        index = int(hit.get_attribute("data-chunk-index"))
        tree_hits.append(index)
        scores.append(float(hit.locator(".cl-score").inner_text().removeprefix("score ")))
        prev = chunk_indices(node.locator("ul[data-role=neighbors_prev] > li"))
        nxt = chunk_indices(node.locator("ul[data-role=neighbors_next] > li"))
        assert prev == ([index - 1] if index > 0 else [])
        assert nxt == ([index + 1] if index + 1 < chunk_count else [])
    assert sorted(tree_hits) == hits
    assert scores == sorted(scores, reverse=True)
    assert page.locator("#expansion-tree ul[data-role^=neighbors] > li").count() >= 1
    # Visibly nested: the neighbour groups are indented from their hit.
    indent = page.locator("#expansion-tree .cl-group").first.evaluate("e => parseFloat(getComputedStyle(e).marginLeft)")
    assert indent > 0

    # The document's markup is shown as text, never turned into elements or run
    # (the tag may straddle two chunks, so look for its start and for any <img>).
    shown = "".join(page.locator("#flat-list .cl-content").all_text_contents())
    assert "<img src=x on" in shown
    assert page.locator("#flat-list img, #expansion-tree img").count() == 0
    assert page.evaluate("window.__chunklab_xss") is None

    # Delete it (confirming the dialog, which names it and its chunks): its chunks leave the index
    # and it leaves the list.
    documents_part(page, "Upload and list")
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.locator("#delete-button").click()
    expect(page.locator("#delete-status")).to_contain_text("Deleted lighthouses.md · default · ")
    expect(page.locator("#delete-status")).to_contain_text(f"and {chunk_count} chunks from the index")
    expect(page.locator("#documents-table")).not_to_contain_text("lighthouses.md")
    assert re.match(
        rf"Delete lighthouses\.md · default · \w{{8}} and its {chunk_count} indexed chunks \(1 index set\)\?", asked[0]
    ), asked


def test_a_bad_upload_shows_a_readable_error(page, tmp_path):
    from playwright.sync_api import expect

    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    choose_file(page, empty)
    page.locator("#upload-button").click()
    # One sentence in the upload's own status, without the service's status code.
    status = page.locator("#upload-status")
    expect(status).to_contain_text("empty.md")
    expect(status).to_contain_text("is empty: there is nothing to ingest")
    expect(status).not_to_contain_text("INVALID_ARGUMENT")
    assert "Traceback" not in page.content()


def test_a_docx_upload_keeps_its_collection_and_language(page, ui_stack, tmp_path):
    from docx import Document
    from playwright.sync_api import expect

    path = tmp_path / "Richtlinie.docx"
    document = Document()
    document.add_heading("Urlaub", level=1)
    document.add_paragraph("Jede Mitarbeiterin hat Anspruch auf dreißig Tage Urlaub im Jahr.")
    document.save(path)
    choose_file(page, path)
    page.locator("#upload-collection textarea, #upload-collection input").first.fill("hr")
    page.locator("#upload-language textarea, #upload-language input").first.fill("de")
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("Uploaded Richtlinie.docx (collection 'hr'")
    row = page.locator("#documents-table tr").filter(has_text="Richtlinie.docx")
    # name, collection, language and format, as the table's first columns say.
    expect(row).to_contain_text(re.compile(r"^Richtlinie\.docx\s*hr\s*de\s*DOCX"))
    # A click on a row of the list selects its document.
    upload(ui_stack, "notiz.md", "# Notiz\n\nKurz gesagt.\n")
    page.locator("#documents-refresh").click()
    note = page.locator("#documents-table tr").filter(has_text="notiz.md")
    expect(note).to_contain_text(re.compile(r"^notiz\.md\s*default"))
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^Richtlinie\.docx · hr · "))
    note.click()
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^notiz\.md · default · "))


# Long enough to scroll in the viewer's box; its markup must stay text in both columns.
LONG_STORMS = "\n".join([STORMS] * 8)
ROW_AT = """([x, y]) => { const at = document.elementFromPoint(x, y); const row = at && at.closest('.cl-sbs-row');
    return row ? row.getAttribute('data-start') : null; }"""


@pytest.fixture(scope="module")
def long_storms(ui_stack) -> str:
    """The long document, indexed with fixed_size 64/0 (set up before the page opens)."""
    document_id = upload(ui_stack, "storms-long.md", LONG_STORMS)
    spec = to_spec("fixed_size", {"chunk_size": 64, "chunk_overlap": 0})
    assert ui_stack.client().process(document_id, [spec]).strategies_completed
    return document_id


def test_the_boundary_viewer_shows_two_configurations_side_by_side_and_scrolls_them_together(
    page, ui_stack, long_storms
):
    from playwright.sync_api import expect

    # With the sample's speech there (as `make up` leaves it), a fresh page opens on it with the
    # baseline and recursive drawn side by side, without a click.
    speech = ui_stack.client().upload_document(samples.SPEECH, language="en").document.document_id
    try:
        page.reload()
        documents_part(page, "Boundaries")
        view = page.locator("#viewer .cl-sbs")
        view.wait_for(timeout=60 * SECONDS)
        expect(page.locator("#documents-boundaries-selected")).to_contain_text(
            "Selected document: state_of_the_union.md · default · "
        )
        summary = page.locator("#viewer-summary")
        expect(summary.locator("[data-side=left] .cl-sbs-label")).to_have_text(
            "fixed_size · chunk_overlap=64, chunk_size=512 (preview)"
        )
        expect(summary.locator("[data-side=right] .cl-sbs-label")).to_contain_text("recursive · ")
        expect(page.locator("#viewer-left-strategy input")).to_have_value("fixed_size")
        expect(page.locator("#viewer-right-strategy input")).to_have_value("recursive")
        for side in ("left", "right"):
            expect(page.locator(f"#viewer-{side}-histogram")).to_be_visible()
            expect(view.locator(f".cl-sbs-cell[data-side={side}] .cl-bmark").first).to_be_visible()
        # In the window, so that its lazily laid-out first rows are painted in the screenshot.
        view.locator(".cl-sbs-scroll").evaluate("e => e.scrollIntoView({block: 'center'})")
        expect(view.locator(".cl-sbs-text").first).to_contain_text("Good evening.")
        screenshot(page, "boundaries-side-by-side")
    finally:
        ui_stack.client().delete_document(speech)

    page.reload()
    documents_part(page, "Upload and list")
    choose(page, "document-select", re.compile(r"^storms-long\.md · "))
    documents_part(page, "Boundaries")
    # Right: the index set processed above; left: a preview of fixed_size 24/6 with overlaps.
    page.locator("#viewer-right-source").get_by_text("Index set", exact=True).click()
    choose(page, "viewer-right-set", re.compile(r"^fixed_size · chunk_overlap=0, chunk_size=64 · "))
    choose(page, "viewer-left-strategy", "fixed_size")
    page.locator("#viewer-left-knob-fixed_size-chunk_size input").fill("24")
    page.locator("#viewer-left-knob-fixed_size-chunk_overlap input").fill("6")
    page.locator("#viewer-button").click()
    view = page.locator("#viewer .cl-sbs")
    view.wait_for()

    # Each column's figures and histogram; each chunk labelled once in its own column.
    summary = page.locator("#viewer-summary")
    expect(summary.locator("[data-side=left] .cl-sbs-label")).to_have_text(
        "fixed_size · chunk_overlap=6, chunk_size=24 (preview)"
    )
    expect(summary.locator("[data-side=right] .cl-sbs-label")).to_contain_text(
        "fixed_size · chunk_overlap=0, chunk_size=64 · "
    )
    for side in ("left", "right"):
        facts = summary.locator(f"[data-side={side}]")
        count = int(re.match(r"(\d+) chunks", facts.locator("[data-fact=chunks]").inner_text()).group(1))
        assert count >= 5 and view.locator(f".cl-sbs-cell[data-side={side}] .cl-bmark").count() == count
        expect(facts.locator("[data-fact=tiny]")).to_contain_text("tiny fragments (under 20 tokens): ")
        expect(facts.locator("[data-fact=mid-sentence]")).to_contain_text("cuts in mid-sentence: ")
        expect(page.locator(f"#viewer-{side}-histogram")).to_be_visible()
        # The column read back is the document, markup and all, as text.
        shown = view.evaluate(
            f"e => [...e.querySelectorAll('.cl-sbs-cell[data-side={side}] .cl-sbs-text')]"
            ".map(s => s.textContent).join('')"
        )
        assert shown == LONG_STORMS
    assert view.locator(".cl-sbs-cell[data-side=left].cl-overlap").count() >= 5
    assert view.locator(".cl-sbs-block").first.evaluate("e => getComputedStyle(e).contentVisibility") == "auto"

    # Scrolling over the left column moves the right one with it: at any height, the row under
    # the left column is the row under the right column, both cells level.
    box = view.locator(".cl-sbs-scroll")
    assert box.evaluate("e => e.scrollHeight > 3 * e.clientHeight")
    box.evaluate("e => e.scrollIntoView({block: 'start'})")  # the pointer must be over it, in the window
    area = box.bounding_box()
    left_x, right_x = area["x"] + area["width"] * 0.25, area["x"] + area["width"] * 0.75
    page.mouse.move(left_x, area["y"] + area["height"] / 2)
    page.mouse.wheel(0, 1500)
    page.wait_for_function("() => document.querySelector('#viewer .cl-sbs-scroll').scrollTop > 600")
    for fraction in (0.3, 0.5, 0.8):
        y = area["y"] + area["height"] * fraction
        row = page.evaluate(ROW_AT, [left_x, y])
        assert row is not None and page.evaluate(ROW_AT, [right_x, y]) == row
        tops = view.locator(f".cl-sbs-row[data-start='{row}'] > div").evaluate_all(
            "cells => cells.map(c => c.getBoundingClientRect().top)"
        )
        assert len(tops) == 2 and tops[0] == tops[1]
    # Down to the end: the last stretch of text shows in both columns.
    # (Blocks drawn as they come near take their real height, so scroll again until the end holds.)
    box.evaluate("""async e => { for (let i = 0; i < 5; i++) { e.scrollTop = e.scrollHeight;
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); } }""")
    last = view.locator(".cl-sbs-row").last
    expect(last.locator(".cl-sbs-cell[data-side=left]")).to_be_in_viewport()
    expect(last.locator(".cl-sbs-cell[data-side=right]")).to_be_in_viewport()
    expect(view.locator(".cl-sbs-row").first).not_to_be_in_viewport()
    assert page.locator("#viewer img, #viewer script").count() == 0
    screenshot(page, "boundaries-scrolled-together")

    # One configuration alone: parent_child with each parent framed, as before.
    page.locator("#viewer-right-source").get_by_text("Nothing (one column)", exact=True).click()
    choose(page, "viewer-left-strategy", "parent_child")
    # The form is drawn again for parent_child, with a Show button of its own: clicked before it is
    # there, the old button's handler is gone (ADR 0032).
    page.locator("#viewer-left-knob-parent_child-child_max_tokens input").wait_for()
    page.locator("#viewer-button").click()
    parents = page.locator("#viewer .cl-boundaries[data-layout=parents] .cl-bparent")
    parents.first.wait_for()
    assert parents.count() >= 3
    expect(page.locator("#viewer-summary [data-side=left] [data-fact=chunks]")).to_contain_text("parents")
    expect(page.locator("#viewer-right-histogram")).to_be_hidden()
    assert page.evaluate("window.__chunklab_xss") is None


def test_an_experiment_from_dry_run_to_report_and_compare(page, ui_stack, storms, tmp_path):
    from playwright.sync_api import expect

    questions = tmp_path / "storm-questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    experiment_grids(page)

    # Import the question set: it becomes the chosen one.
    page.locator("#qs-file input[type=file]").set_input_files(str(questions))
    page.locator(f'#qs-file a[href$="/{questions.name}"]').wait_for()
    page.locator("#qs-import").click()
    expect(page.locator("#qs-status")).to_contain_text("Imported storm-questions.jsonl: 2 questions")
    expect(page.locator("#qs-select input")).to_have_value(re.compile(r"^storm-questions\.jsonl · 2 questions"))

    # The recommended strategy and hybrid start ticked beside the baseline (ADR 0064); this run is
    # fixed_size alone, in small windows with one neighbour each side; answers extractive (no LLM here).
    expect(page.locator("#exp-recommended")).to_contain_text("recommended by docs/benchmarks.md")
    expect(page.locator("#exp-hybrid input")).to_be_checked()
    page.locator("#exp-use-cluster_parent_child input").uncheck()
    fill(page, "grid-fixed_size-chunk_size", "40")
    fill(page, "grid-fixed_size-chunk_overlap", "0")
    page.locator("#exp-neighbor-prev input").fill("1")
    page.locator("#exp-neighbor-next input").fill("1")
    fill(page, "exp-name", "storms ±1")

    page.locator("#dry-run-button").click()
    estimate = page.locator("#experiment-status .cl-estimate")
    expect(estimate).to_contain_text("Dry run: nothing was called or stored.")
    expect(estimate.locator("td[data-fact=questions]")).to_have_text("2")
    expect(estimate.locator("td[data-fact='LLM calls']")).to_have_text("0")
    expect(estimate.locator(".cl-runs code")).to_have_text("fixed_size[chunk_size=40,chunk_overlap=0]")
    expect(page.locator("#experiments-table")).not_to_contain_text("storms ±1")

    page.locator("#run-button").click()
    done = page.locator("#experiment-status .cl-experiment[data-state=succeeded]")
    expect(done).to_be_visible(timeout=120 * SECONDS)
    expect(done.locator("tr[data-run-key] td").nth(1)).to_have_text("2/2")

    # Listed with its neighbours badge (not muted: fixed_size ran) and its embedding model.
    row = page.locator("#experiments-table tr[data-experiment-id]").filter(has_text="storms ±1")
    expect(row.locator("[data-muted=false]")).to_have_text("±1/1")
    expect(row.locator(".cl-mbadge")).to_have_text(Settings().embedding_model)
    experiment_id = row.get_attribute("data-experiment-id")

    # It opens in the detail view: one question with its extractive answer and expansion tree.
    detail = page.locator("#question-detail .cl-question")
    expect(detail.locator("h4")).to_have_text(QUESTIONS[0]["question"])
    expect(detail.locator(".cl-answer")).to_have_attribute("data-extractive", "true")
    assert detail.locator("li.cl-node").count() >= 1
    assert detail.locator("ul[data-role^=neighbors] > li").count() >= 1
    assert page.locator("#question-detail img, #question-detail script").count() == 0
    # Its verdict and plots (ADR 0058): one run has nothing to be compared with; its recall is drawn
    # against the tokens it sends, and its means as bars with their intervals beside them.
    expect(page.locator("#detail-summary p.verdict")).to_contain_text("is the only run that answered questions")
    expect(page.locator("#experiment-tradeoff-plot")).to_contain_text("recall against tokens sent")
    expect(page.locator("#experiment-means-plot")).to_contain_text("recall: mean per run")
    expect(page.locator("#experiment-means-table")).to_contain_text("%")

    # Only an interrupted or failed experiment can be resumed, only a running one cancelled:
    # for this finished one both buttons are off.
    expect(page.locator("#detail-resume")).to_be_disabled()
    expect(page.locator("#detail-cancel")).to_be_disabled()
    # Its question set cannot be deleted while the experiment uses it (said in place); an unused one can.
    page.locator("#qs-delete").click()
    expect(page.locator("#qs-status")).to_contain_text("is used by experiment")
    expect(page.locator("#qs-status")).not_to_contain_text("FAILED_PRECONDITION")
    spare = tmp_path / "spare-questions.jsonl"
    spare.write_text(json.dumps(QUESTIONS[0]) + "\n")
    page.locator("#qs-file button[aria-label=Clear]").click()
    page.locator("#qs-file input[type=file]").set_input_files(str(spare))
    page.locator(f'#qs-file a[href$="/{spare.name}"]').wait_for()
    page.locator("#qs-import").click()
    expect(page.locator("#qs-select input")).to_have_value(re.compile(r"^spare-questions\.jsonl · 1 questions"))
    page.locator("#qs-delete").click()
    expect(page.locator("#qs-status")).to_contain_text("Deleted the question set spare-questions.jsonl.")
    expect(page.locator("#qs-select input")).not_to_have_value(re.compile(r"^spare-questions"))

    # The report opens in a sandboxed frame: the hostile document is text there, and nothing ran.
    page.get_by_role("tab", name="Reports").click()
    choose(page, "report-experiment", re.compile(experiment_id[:8]))
    page.locator("#report-view").get_by_text("both").click()
    page.locator("#report-open").click()
    frame_element = page.locator("#report-frame iframe")
    expect(frame_element).to_have_attribute("sandbox", "")
    # Loaded from the UI's report route, as a page of any size is, not carried in the page itself.
    assert frame_element.get_attribute("src").startswith("chunklab-reports/")
    assert frame_element.get_attribute("srcdoc") is None
    report = page.frame_locator("#report-frame iframe")
    expect(report.locator("h1")).to_have_text("storms ±1")
    expect(report.locator("body")).to_contain_text("Technical view")
    assert report.locator("script, img, iframe").count() == 0
    # (text_content: the per-question detail is folded in <details>)
    assert "window.__chunklab_xss" in report.locator("body").text_content()
    assert page.evaluate("window.__chunklab_xss") is None
    assert page.locator("#report-file a").first.get_attribute("href").endswith("-both.html")

    # A second experiment without neighbours: Compare warns, and both columns carry their badge.
    lab = ui_stack.client()
    chosen = lab.get_experiment(experiment_id)
    config = evaluator_pb2.ExperimentConfig(
        name="storms ±0",
        question_set_id=chosen.config.question_set_id,
        strategies=chosen.config.strategies,
        retrieval=common_pb2.RetrievalOptions(top_k=chosen.config.retrieval.top_k),
        retrieval_only=True,
    )
    *_, last = lab.run_experiment(config)
    assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED
    page.get_by_role("tab", name="Compare").click()
    # It opens on the two finished experiments on this question set, the newest first, compared
    # at once (ADR 0093).
    badges = page.locator("#compare-result .cl-compare-columns th [data-muted]")
    expect(badges).to_have_text(["±0/0", "±1/1"], timeout=60 * SECONDS)
    # The first one chosen is the baseline: ±0 off and on again puts ±1 first.
    choose(page, "compare-select", re.compile(r"^storms ±0 "))
    expect(page.locator("#compare-button")).to_be_disabled()
    choose(page, "compare-select", re.compile(r"^storms ±0 "))
    page.locator("#compare-button").click()
    warning = page.locator("#compare-result .cl-warnings[role=alert]")
    expect(warning).to_contain_text("neighbour expansion differs")
    expect(badges).to_have_text(["±1/1", "±0/0"])
    expect(page.locator("#compare-result details[data-metric=iou] tr[data-run-key]")).to_have_count(1)
    # The plot draws the headline metric first; another one is a pick away.
    plot = page.locator("#compare-plot")
    expect(page.locator("#compare-plot-metric input")).to_have_value("IoU")  # the catalogue's label
    expect(plot.locator("svg.marks")).to_be_visible()
    expect(plot).to_contain_text("IoU: difference from the baseline (95% CI)")
    choose(page, "compare-plot-metric", "recall")
    expect(plot).to_contain_text("recall: difference from the baseline (95% CI)")
    # The runs of both experiments on one trade-off plot, and their wins and losses per question.
    expect(page.locator("#compare-tradeoff-plot")).to_contain_text("recall against tokens sent")
    expect(page.locator("#compare-wins-plot")).to_contain_text("wins, ties and losses on recall")
    expect(page.locator("#compare-result .cl-verdict").first).to_contain_text("is the only run")


def test_a_fresh_page_starts_on_the_newest_document_and_question_set(page, ui_stack):
    from playwright.sync_api import expect

    upload(ui_stack, "tides.md", "# Tides\n\nThe tide turns twice a day.\n")
    page.reload()
    documents_part(page, "Upload and list")
    # Ready to process or view at once: the newest document is selected, and how it is indexed shows.
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^tides\.md · default · "))
    documents_part(page, "Index sets and export")
    expect(page.locator("#indexed-sets")).to_contain_text(f"Not indexed with {Settings().embedding_model} yet")
    page.get_by_role("tab", name="Experiments").click()
    # The spare set was deleted in the experiment test: the newest one left is chosen.
    expect(page.locator("#qs-select input")).to_have_value(re.compile(r"^storm-questions\.jsonl · 2 questions"))


def test_freshness_windows_and_a_sweep_from_dry_run_to_restore(page, ui_stack):
    from playwright.sync_api import expect

    bulletin = upload(
        ui_stack, "bulletin.md", "# Harbour bulletin\n\nThe north pier is closed for repairs.\n", collection="news"
    )
    result = ui_stack.client().process(bulletin, [common_pb2.StrategySpec(name="fixed_size")])
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size"]

    page.get_by_role("tab", name="Freshness").click()
    windows = page.locator("#windows-table")
    expect(windows.locator("tr[data-collection=news]")).to_contain_text("7 days")
    expect(windows.locator("tr[data-collection=default]")).to_contain_text("unlimited")

    # A malformed collection name is refused with the retriever's own sentence.
    page.locator("#window-collection input").fill("bad name!")
    page.locator("#window-collection input").press("Enter")
    page.locator("#window-save").click()
    status = page.locator("#window-status")
    expect(status).to_contain_text("bad name!")
    expect(status).to_contain_text("is not a collection name")
    expect(status).not_to_contain_text("INVALID_ARGUMENT")
    assert "Traceback" not in page.content()

    # Sweeping is a dry run first; as of 2040 the news bulletin is past its 7 days.
    expect(page.locator("#sweep-now")).to_be_disabled()
    fill(page, "sweep-as-of", "2040-01-01")
    page.locator("#sweep-dry-run").click()
    dry = page.locator("#sweep-result .cl-sweep[data-kind=dry-run]")
    expect(dry).to_contain_text("Nothing has changed yet")
    expect(dry.locator(f"tr[data-document-id='{bulletin}']")).to_contain_text("bulletin.md")
    expect(page.locator("#archived-table")).to_contain_text("No document is in cold storage")

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#sweep-now").click()
    swept = page.locator("#sweep-result .cl-sweep[data-kind=swept]")
    expect(swept).to_contain_text("archived to cold storage")
    expect(page.locator(f"#archived-table tr[data-document-id='{bulletin}']")).to_contain_text("news")

    choose(page, "archived-select", re.compile(r"^bulletin\.md · news"))
    page.locator("#restore-button").click()
    expect(page.locator("#restore-status")).to_contain_text("Restored bulletin.md · news")
    expect(page.locator("#restore-status")).to_contain_text("back in the index")
    expect(page.locator("#archived-table")).to_contain_text("No document is in cold storage")


def test_every_document_is_processed_as_one_bulk_load_through_the_broker(page, ui_stack, storms):
    from playwright.sync_api import expect

    expect(page.locator("#document-select input")).not_to_have_value("")
    documents_part(page, "Process")
    page.locator("#knob-fixed_size-chunk_size input").fill("64")
    page.locator("#knob-fixed_size-chunk_overlap input").fill("0")
    page.locator("#bulk-button").click()
    done = page.locator("#process-status .cl-bulk[data-state=done]")
    expect(done).to_be_visible(timeout=120 * SECONDS)
    documents = ui_stack.client().list_documents()
    assert int(done.get_attribute("data-total")) == int(done.get_attribute("data-done")) == len(documents) >= 1
    expect(done.locator("li[data-outcome=ok]")).to_have_count(len(documents))
    expect(done).to_contain_text("through embedded queue")
    expect(done.locator("li").first).to_contain_text("fixed_size")
    # The selected document is now indexed with the knobs the bulk load used.
    documents_part(page, "Index sets and export")
    expect(page.locator("#indexed-sets tr[data-strategy=fixed_size] td").nth(1)).to_have_text(
        "chunk_overlap=0, chunk_size=64"
    )
    # The load heads the list of recent bulk loads, finished.
    documents_part(page, "Process")
    newest = page.locator("#bulk-loads tr[data-bulk-load]").first
    expect(newest).to_have_attribute("data-state", "done")
    expect(newest).to_contain_text(f"{len(documents)} / {len(documents)}")


def test_two_configurations_of_one_strategy_are_listed_and_queried_side_by_side(page, ui_stack):
    """ADR 0038: fixed_size 48/0 and 128/16 on one document are both indexed; the
    Documents page lists both with the active one marked, and the Query page
    searches either by picking its configuration. (48/0 is this test's own: the
    bulk load before it indexes every document with 64/0.)"""
    from playwright.sync_api import expect

    document_id = upload(ui_stack, "two-configs.md", DOCUMENT.replace("Lighthouse keeping", "Two configurations"))
    lab = ui_stack.client()
    for size, overlap in ((48, 0), (128, 16)):
        spec = to_spec("fixed_size", {"chunk_size": size, "chunk_overlap": overlap})
        assert lab.process(document_id, [spec]).strategies_completed

    page.locator("#documents-refresh").click()  # uploaded through gRPC after the page loaded
    choose(page, "document-select", re.compile(r"^two-configs\.md "))
    documents_part(page, "Index sets and export")
    rows = page.locator("#indexed-sets tr[data-strategy=fixed_size]")
    expect(rows.first.locator("td").nth(1)).to_have_text("chunk_overlap=16, chunk_size=128")  # this document's
    expect(rows).to_have_count(2)
    assert [r.get_attribute("data-active") for r in rows.all()] == ["true", "false"]  # newest, active, first

    page.get_by_role("tab", name="Query").click()
    choose(page, "query-strategy", "fixed_size")
    choose(page, "query-documents", re.compile(r"^two-configs\.md "))
    page.locator("#query-text textarea").fill(QUESTION)
    page.locator("#query-top-k input").fill("3")

    def ask_with(configuration: str | re.Pattern) -> list[int]:
        choose(page, "query-configuration", configuration)
        # The last answer's box says done too: clear it, so the wait below is for this one.
        page.evaluate("() => document.querySelectorAll('#answer .cl-answer').forEach(e => e.remove())")
        page.locator("#ask-button").click()
        page.locator("#answer .cl-answer[data-state=done]").wait_for()
        hits = page.locator("#flat-list li[data-label=hit] .cl-tokens")
        return [int(t.split()[0]) for t in hits.all_text_contents()]

    small = ask_with(re.compile(r"chunk_overlap=0, chunk_size=48 · 1 document$"))
    assert small and max(small) <= 48
    large = ask_with(re.compile(r"chunk_overlap=16, chunk_size=128 · 1 document, active in 1$"))
    assert large and max(large) > 64 and max(large) <= 128
    active = ask_with("active set of each document")
    assert active == large  # the last configuration processed is the active one


SIDE_QUESTION = "Which fog horns warned ships in storms when the beam was hidden?"
SIDE_EXCERPT = "warned ships in storms when the beam was hidden"


@pytest.fixture(scope="module")
def side_by_side(ui_stack) -> str:
    """One document indexed with fixed_size 40/0 and 200/0, and a question set with one
    question whose excerpt is in it (set up before the page opens)."""
    document_id = upload(ui_stack, "side-by-side.md", DOCUMENT.replace("Lighthouse keeping", "Side by side"))
    lab = ui_stack.client()
    for size in (40, 200):
        assert lab.process(
            document_id, [to_spec("fixed_size", {"chunk_size": size, "chunk_overlap": 0})]
        ).strategies_completed
    line = {"question": SIDE_QUESTION, "references": [{"document": "side-by-side.md", "content": SIDE_EXCERPT}]}
    lab.import_question_set((json.dumps(line) + "\n").encode(), name="side-questions.jsonl")
    return document_id


def test_one_question_asked_of_two_configurations_side_by_side_marks_its_excerpt(side_by_side, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Query").click()
    choose(page, "query-question-set", re.compile(r"^side-questions\.jsonl · 1 questions"))
    choose(page, "query-question-pick", re.compile(r"^Which fog horns warned ships"))
    expect(page.locator("#query-text textarea")).to_have_value(SIDE_QUESTION)
    choose(page, "query-documents", re.compile(r"^side-by-side\.md "))
    page.locator("#query-top-k input").fill("2")
    # The page opens on every strategy's active sets: replace them with the two configurations.
    page.locator("#query-configurations .remove-all").click()
    for size in (40, 200):
        choose(page, "query-configurations", re.compile(rf"^fixed_size · chunk_overlap=0, chunk_size={size} · "))
    page.locator("#side-by-side-button").click()

    columns = page.locator("#query-columns section.cl-column[data-state=done]")
    expect(columns).to_have_count(2)
    expect(columns.nth(0).locator("h4")).to_contain_text("chunk_size=40")
    expect(columns.nth(1).locator("h4")).to_contain_text("chunk_size=200")
    expect(columns.nth(1).locator(".cl-column-measures")).to_contain_text("recall 100.0%")
    for index in range(2):
        column = columns.nth(index)
        expect(column.locator(".cl-found")).to_have_text("found 1 of 1 excerpt")
        # What is marked is the excerpt (or, where the small chunks cut it, the part retrieved): the recall.
        marked = "".join(column.locator(".cl-flat-list mark.cl-ref").all_text_contents())
        assert marked and marked in SIDE_EXCERPT
        recall = float(column.locator(".cl-column-measures").get_attribute("data-recall"))
        assert recall == pytest.approx(len(marked) / len(SIDE_EXCERPT))
        tokens = [
            int(t.split()[0]) for t in column.locator(".cl-flat-list li[data-label=hit] .cl-tokens").all_text_contents()
        ]
        assert tokens and max(tokens) <= (40, 200)[index]
    # The expansion tree is one click away in each column.
    tree = columns.nth(0).locator("details.cl-column-tree")
    expect(tree.locator(".cl-tree")).to_be_hidden()
    tree.locator("summary").click()
    expect(tree.locator(".cl-node").first).to_be_visible()
    assert page.evaluate("() => window.__chunklab_xss") is None  # the document's markup stayed text
    screenshot(page, "query-side-by-side")


@pytest.fixture(scope="module")
def sample_loaded(ui_stack) -> str:
    """The sample `make up` loads (its two documents, processed with fixed_size and recursive
    to stay quick, and its labelled question set), without its experiments, which other
    tests' lists would see; returns the question set's id. Last in the module, since the
    Query page opens on it once it is there."""
    from chunklab_app import sample_loader

    lab = ui_stack.client()
    return sample_loader.question_set(
        lab, sample_loader.upload_and_process(lab, ["fixed_size", "recursive"], lambda _: None)
    )


def test_the_query_page_opens_on_the_samples_question_compared_side_by_side_without_typing(
    sample_loaded, ui_stack, page
):
    from playwright.sync_api import expect

    from chunklab_app import sample_loader

    first = next(q for q in ui_stack.client().get_question_set(sample_loaded).questions if q.references)
    page.get_by_role("tab", name="Query").click()
    # Nothing typed, nothing clicked: the sample's first question, asked of several configurations
    # (the baseline first, since the recommended strategy is not processed here).
    expect(page.locator("#query-text textarea")).to_have_value(first.text)
    expect(page.locator("#query-question-set input")).to_have_value(
        re.compile(rf"^{sample_loader.QUESTION_SET_NAME} · ")
    )
    expect(page.locator("#query-columns .cl-columns")).to_have_attribute("data-question-id", first.question_id)
    columns = page.locator("#query-columns section.cl-column[data-state=done]")
    columns.nth(1).wait_for()
    strategies = [columns.nth(i).get_attribute("data-strategy") for i in range(columns.count())]
    # The strategies the Process form ticks first (those indexed anywhere), then the others processed.
    first_ones = [name for name in recommended.FIRST_STRATEGIES if name in strategies]
    assert strategies[: len(first_ones)] == first_ones and "fixed_size" in first_ones, strategies
    assert "recursive" in strategies and len(strategies) <= 4, strategies
    excerpts = len(first.references)
    for index in range(len(strategies)):
        column = columns.nth(index)
        if column.locator(".cl-column-missing").count():
            # A strategy that never processed the sample's documents says so instead of answering from others.
            expect(column.locator(".cl-process-missing")).to_be_visible()
            continue
        measures = column.locator(".cl-column-measures")
        expect(measures).to_have_attribute("data-excerpts", str(excerpts))
        found = int(measures.get_attribute("data-found"))
        expect(column.locator(".cl-found")).to_have_text(f"found {found} of {excerpts} excerpts")
        # Each excerpt the column found is highlighted inside its context, within the reference's characters.
        marks = column.locator(".cl-flat-list mark.cl-ref")
        assert (marks.count() > 0) == (found > 0)
        for mark in marks.all():
            start, end = int(mark.get_attribute("data-start")), int(mark.get_attribute("data-end"))
            assert any(r.start_char <= start < end <= r.end_char for r in first.references)
        # Then the column's own answer: extractive (no LLM here), each piece citing its chunk.
        answer = column.locator(".cl-column-answer[data-state=done]")
        expect(answer).to_have_attribute("data-extractive", "true")
        expect(answer.locator(".cl-citations li").first).to_have_attribute("data-cite", re.compile(r" · \w+ \d+$"))
    assert any(
        int(columns.nth(i).locator(".cl-column-measures").get_attribute("data-found")) for i in range(len(strategies))
    )
    screenshot(page, "query-first-minute")


def test_an_experiment_opened_while_it_runs_shows_its_questions_once_it_has_finished(page, ui_stack, storms):
    """The Detail view follows an experiment opened mid-run (no question answered yet): once it has
    finished, its Question list holds its results and the first one shows, with no click."""
    from playwright.sync_api import expect

    lab = ui_stack.client()
    question_set = lab.import_question_set(
        "".join(json.dumps(q) + "\n" for q in QUESTIONS).encode(), name="storms-mid-run.jsonl"
    )
    answering = threading.Event()
    with FakeOpenAI() as llm:
        llm.responder = lambda messages, model: answering.wait(60) and "Fog horns warned ships."
        events = lab.run_experiment(
            evaluator_pb2.ExperimentConfig(
                name="storms mid-run",
                question_set_id=question_set.question_set_id,
                strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
                retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=[storms])),
                answer_model=evaluator_pb2.ModelEndpoint(base_url=llm.base_url, model="fake"),
                judge_model=evaluator_pb2.ModelEndpoint(model="none"),
            )
        )
        next(e for e in events if e.progress.message == "started")  # stored as running
        page.get_by_role("tab", name="Experiments").click()
        page.locator("#experiments-refresh").click()
        choose(page, "detail-experiment", re.compile(r"^storms mid-run · running · "))
        expect(page.locator("#detail-cancel")).to_be_enabled()  # the page sees it running
        expect(page.locator("#detail-run input")).to_have_value(re.compile(r"^fixed_size"))
        answering.set()
        *_, last = events
    assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, last.experiment.error
    expect(page.locator("#detail-cancel")).to_be_disabled()
    expect(page.locator("#detail-experiment input")).to_have_value(re.compile(r"^storms mid-run · succeeded · "))
    expect(page.locator("#question-detail .cl-question h4")).to_have_text(QUESTIONS[0]["question"])
    choose(page, "detail-question", QUESTIONS[1]["question"])
    expect(page.locator("#question-detail .cl-question h4")).to_have_text(QUESTIONS[1]["question"])
