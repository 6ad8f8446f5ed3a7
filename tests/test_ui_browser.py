"""The UI in a real headless browser, driven as a user would, against the
whole stack (four services and the UI, each its own process on a free port).

Chromium is Debian's (`make browser`); Playwright never downloads its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chunklab.stack import Stack

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
# The markup in the Storms section must show as text and never run: documents are untrusted.
DOCUMENT = """# Lighthouse keeping

## History

The first lighthouses were fires lit on hilltops to guide ships home. Over centuries they became
towers of stone with oil lamps and polished reflectors. Keepers lived beside them with their families.

## The lens

Augustin Fresnel invented a lens in 1822 made of concentric prisms. It bent light into a narrow beam
that could be seen for twenty miles. Every major lighthouse adopted the Fresnel lens within fifty years.

## Daily duties

A keeper trimmed the wick every four hours, which is why keepers were called wickies. They polished
the brass, cleaned soot from the glass and wrote the weather in the logbook.

## Storms

Fog horns <img src=x onerror="window.__chunklab_xss=1"> warned ships in storms when the beam was hidden.

## Automation

Electric lamps and automatic timers replaced the keepers during the twentieth century. Today most
lights run by themselves and are checked by engineers a few times a year.
"""
QUESTION = "Which fog horns warned ships in storms when the beam was hidden?"
SECONDS = 1000  # Playwright counts milliseconds


@pytest.fixture(scope="module")
def ui_stack(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run the browser tests")
    stack = Stack(data_dir=tmp_path_factory.mktemp("ui-stack"), ui=True).start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def browser(ui_stack):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, ui_stack):
    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    page.set_default_timeout(30 * SECONDS)
    page.goto(ui_stack.ui_url)
    # The strategy form appears once the chunker's ListStrategies has answered.
    page.locator("#knob-fixed_size-chunk_size input").wait_for()
    yield page
    context.close()


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


def test_upload_process_and_query_show_hits_with_their_neighbours(page, tmp_path):
    from playwright.sync_api import expect

    document = tmp_path / "lighthouses.md"
    document.write_text(DOCUMENT)

    # Upload: the new document is reported, listed and selected.
    choose_file(page, document)
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("Uploaded lighthouses.md")
    expect(page.locator("#documents-table")).to_contain_text("lighthouses.md")
    expect(page.locator("#document-select input")).to_have_value(re.compile(r"^lighthouses\.md · default · "))
    # The same bytes again are recognised, not stored twice.
    choose_file(page, document)
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("lighthouses.md was already uploaded")

    # Process with fixed_size in small windows so the document has many chunks.
    page.locator("#knob-fixed_size-chunk_size input").fill("32")
    page.locator("#knob-fixed_size-chunk_overlap input").fill("0")
    page.locator("#process-button").click()
    status = page.locator("#process-status")
    expect(status).to_contain_text("strategies_completed", timeout=60 * SECONDS)
    completed = status.locator("li[data-strategy=fixed_size]").inner_text()
    chunk_count = int(re.search(r"fixed_size: (\d+) chunks", completed).group(1))
    assert chunk_count >= 6, completed
    expect(status).not_to_contain_text("strategies_failed")

    # Query with one neighbour on each side.
    page.get_by_role("tab", name="Query").click()
    expect(page.locator("#query-strategy input")).to_have_value("fixed_size")
    page.locator("#query-text textarea").fill(QUESTION)
    page.locator("#query-top-k input").fill("2")
    page.locator("#query-neighbor-prev input").fill("1")
    page.locator("#query-neighbor-next input").fill("1")
    page.locator("#retrieve-button").click()
    flat = page.locator("#flat-list")
    flat.locator("[data-label=hit]").first.wait_for()

    # (a) The flat list: hits and neighbours, each once, in document order.
    hits = chunk_indices(flat.locator("li[data-label=hit]"))
    neighbors = chunk_indices(flat.locator("li[data-label=neighbor]"))
    everything = chunk_indices(flat.locator("li[data-label]"))
    assert len(hits) == 2 and neighbors, everything
    assert everything == sorted(set(everything))
    assert set(everything) == {
        i for h in hits for i in (h - 1, h, h + 1) if 0 <= i < chunk_count
    }
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

    # Delete it (confirming the dialog): its chunks leave the index and it leaves the list.
    page.get_by_role("tab", name="Documents").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#delete-button").click()
    expect(page.locator("#delete-status")).to_contain_text("Deleted lighthouses.md · default · ")
    expect(page.locator("#delete-status")).to_contain_text(f"and {chunk_count} chunks from the index")
    expect(page.locator("#documents-table")).not_to_contain_text("lighthouses.md")


def test_a_bad_upload_shows_a_readable_error(page, tmp_path):
    from playwright.sync_api import expect

    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    choose_file(page, empty)
    page.locator("#upload-button").click()
    toast = page.locator(".toast-body").filter(has_text="empty.md")
    expect(toast).to_contain_text("INVALID_ARGUMENT")
    expect(toast).to_contain_text("is empty: there is nothing to ingest")
    assert "Traceback" not in page.content()
