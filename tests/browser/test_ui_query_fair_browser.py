"""Fair Query columns and the expansion tree in the browser (issue 27, items 2 and 8; ADRs
0083 and 0084): a column whose strategy has not processed a document says so and offers to
process it, and after the click covers it; hits that share a parent show it once with each
hit marked inside; five columns scroll at 1440 px instead of being cut off."""

from __future__ import annotations

import re

import pytest

from chunklab.knobs import to_spec
from tests.support.browser import DOCUMENT, SECONDS, STORMS, choose, screenshot, upload

QUESTION = "What did fog horns do when the beam was hidden?"
# No headings: parent_child groups the paragraphs into one parent, each paragraph a child.
HARBOUR = """The harbour master kept a bell on the quay for foggy mornings.

Fog horns on the pier warned the fishing boats when the beam was hidden by fog.

The pilots rowed out to meet ships that did not know the channel.

A second horn on the breakwater answered the first so that boats could find the gap.

In winter the harbour froze at its edges and the boats stayed in for weeks.
"""


@pytest.fixture(scope="module")
def documents(ui_stack) -> dict[str, str]:
    """lighthouses.md processed with fixed_size and recursive; storms.md with recursive only;
    harbour.txt with parent_child (one parent holding every paragraph)."""
    lab = ui_stack.client()
    ids = {
        "lighthouses": upload(ui_stack, "lighthouses.md", DOCUMENT),
        "storms": upload(ui_stack, "storms.md", STORMS),
        "harbour": upload(ui_stack, "harbour.txt", HARBOUR),
    }
    plan = {
        "lighthouses": [to_spec("fixed_size", {"chunk_size": 48, "chunk_overlap": 0}), to_spec("recursive", {})],
        "storms": [to_spec("recursive", {})],
        "harbour": [to_spec("parent_child", {"child_max_tokens": 32})],
    }
    for name, specs in plan.items():
        assert not lab.process(ids[name], specs).strategies_failed
    return ids


def search(page, *configurations: re.Pattern, top_k: str = "3") -> None:
    page.get_by_role("tab", name="Query").click()
    page.locator("#query-text textarea").fill(QUESTION)
    page.locator("#query-top-k input").fill(top_k)
    page.locator("#query-configurations .remove-all").click()
    for configuration in configurations:
        choose(page, "query-configurations", configuration)
    page.locator("#side-by-side-button").click()


def test_the_process_form_ticks_the_strategies_the_query_page_opens_on(page):
    from playwright.sync_api import expect

    for name in ("cluster_parent_child", "fixed_size"):
        expect(page.locator(f"#use-{name} input")).to_be_checked()
    expect(page.locator("#use-recursive input")).not_to_be_checked()


def test_a_column_over_a_document_its_strategy_has_not_processed_says_so_and_processes_it(documents, ui_stack, page):
    from playwright.sync_api import expect

    search(page, re.compile(r"^fixed_size · active sets"), re.compile(r"^recursive · active sets"))
    fixed = page.locator("#query-columns section.cl-column[data-strategy=fixed_size][data-state=done]")
    recursive = page.locator("#query-columns section.cl-column[data-strategy=recursive][data-state=done]")
    missing = fixed.locator(".cl-column-missing")
    expect(missing).to_contain_text("fixed_size has not processed 'storms.md'")
    expect(missing).to_contain_text("does not cover 2 of the documents asked for")
    # harbour.txt was processed by parent_child only: neither column covers it, and both say so.
    expect(missing).to_contain_text("fixed_size has not processed 'harbour.txt'")
    expect(recursive.locator(".cl-column-missing")).to_contain_text("recursive has not processed 'harbour.txt'")
    expect(recursive.locator(".cl-column-missing")).not_to_contain_text("storms.md")
    # fixed_size's context comes from lighthouses.md only.
    expect(fixed.locator(".cl-flat-list .cl-doc").first).to_have_text("lighthouses.md")
    assert "storms.md" not in fixed.locator(".cl-flat-list").inner_text()
    screenshot(page, "query-fair-column-not-covered")

    fixed.locator("button.cl-process-missing").click()
    # Processed with the column's own knobs, then searched again: storms.md is covered now.
    expect(fixed.locator(".cl-column-missing")).to_have_count(0, timeout=180 * SECONDS)
    expect(fixed.locator(".cl-flat-list")).to_contain_text("storms.md")
    expect(page.locator("#query-columns section.cl-column[data-state=done]")).to_have_count(2)
    screenshot(page, "query-fair-column-processed")
    # What the button made: storms.md's fixed_size set at the column's knobs (48/0), now active.
    made = [s for s in ui_stack.client().list_indexed_sets("fixed_size", documents["storms"]) if s.active]
    assert [s.spec.knobs["chunk_size"].int_value for s in made] == [48]


def test_hits_that_share_a_parent_show_it_once_with_each_hit_marked_inside(documents, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Query").click()
    choose(page, "query-documents", re.compile(r"^harbour\.txt "))
    search(page, re.compile(r"^parent_child · active sets"))
    column = page.locator("#query-columns section.cl-column[data-strategy=parent_child][data-state=done]")
    tree = column.locator("details.cl-column-tree")
    tree.locator("summary").click()
    node = tree.locator("li.cl-node")
    # Three hits, one parent: one node that lists the three hits, the parent drawn once.
    expect(node).to_have_count(1)
    expect(node).to_have_attribute("data-hits", "3")
    expect(node.locator("ol.cl-shared-hits > li[data-role=hit]")).to_have_count(3)
    parent = node.locator("ul[data-role=parent] > li")
    expect(parent).to_have_count(1)
    # Each hit is marked inside the parent's text at its own characters, labelled with its rank.
    marks = parent.locator("mark.cl-hit-span")
    expect(marks).to_have_count(3)
    assert sorted(m.get_attribute("data-rank") for m in marks.all()) == ["1", "2", "3"]
    hits = node.locator("ol.cl-shared-hits > li[data-role=hit]")
    for index in range(3):
        hit = hits.nth(index)
        badge = hit.locator(".cl-chunk-head .cl-badge")
        expect(badge).to_have_text(re.compile(r"^hit #\d+$"))  # each hit's own badge, with its rank
        text = hit.locator("pre.cl-content").inner_text().strip()
        rank = badge.inner_text().split("#")[1]
        marked = parent.locator(f"mark.cl-hit-span[data-rank='{rank}']").inner_text()
        assert marked.removeprefix(f"#{rank}").strip() == text
    node.scroll_into_view_if_needed()
    screenshot(page, "query-tree-shared-parent")


def test_five_columns_scroll_side_by_side_at_1440_pixels(documents, page):
    from playwright.sync_api import expect

    page.set_viewport_size({"width": 1440, "height": 1000})
    search(
        page,
        re.compile(r"^fixed_size · active sets"),
        re.compile(r"^fixed_size · chunk_overlap=0, chunk_size=48 · "),
        re.compile(r"^recursive · active sets"),
        re.compile(r"^recursive · chunk_overlap="),
        re.compile(r"^parent_child · active sets"),
    )
    columns = page.locator("#query-columns section.cl-column[data-state=done]")
    expect(columns).to_have_count(5)
    row = page.locator("#query-columns .cl-columns-row")
    # The row fits the page and scrolls: the fifth column is reached by scrolling it, not cut off.
    assert row.evaluate("r => r.scrollWidth > r.clientWidth"), "five columns fit without scrolling?"
    assert row.evaluate("r => r.getBoundingClientRect().right") <= 1440
    row.evaluate("r => { r.scrollLeft = r.scrollWidth; }")
    last = columns.nth(4).bounding_box()
    assert last["x"] >= 0 and last["x"] + last["width"] <= 1440, last
    expect(columns.nth(4).locator("h4")).to_contain_text("parent_child")
    screenshot(page, "query-five-columns-scrolled")
