"""One number format (issue 27, item 3), in a real headless browser against the whole stack:
a typed question and a question from a set both count their tokens sent as "1,536", never
"1536.000"; the Experiments table counts questions and configurations apart; Experiments and
Compare write tokens with thousands separators, and the Pareto plot's tooltip holds the
tables' decimals (never "1270.42857143"). The document is long and its chunks large, so that
every count worth a separator has one. Each test saves a screenshot under .chunklab/screenshots/.
"""

from __future__ import annotations

import json
import re

import pytest

from chunklab.knobs import to_spec
from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.browser import DOCUMENT, choose, documents_part, screenshot, upload

pytestmark = pytest.mark.browser
WAIT_MS = 60_000  # what a check waits for the page on a busy machine

NAME = "numbers.md"
QUESTION = "How many gulls did the keeper count on the gallery rail?"
EXCERPT = "the keeper counted 1,077 gulls on the gallery rail"
SECOND = "What colour was the door of the oil store?"
SECOND_EXCERPT = "the door of the oil store was painted green"
TYPED = "How often did a keeper trim the wick?"
SIZES = (256, 512)
EXPERIMENTS = ("numbers A", "numbers B")
# A count of 1,000 or more, written with its separator; never with decimals.
THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+ tokens sent$")
LONG_DECIMALS = re.compile(r"\d\.\d{4,}")


def long_document() -> str:
    """The lighthouse text twelve times over (about 3,500 tokens), each copy its own chapter;
    the two excerpts occur once each."""
    body = DOCUMENT.split("\n", 1)[1].replace('<img src=x onerror="window.__chunklab_xss=1">', "")
    chapters = [f"\n# Chapter {n}\n{body}" for n in range(1, 13)]
    chapters[6] += f"\nOne morning {EXCERPT}.\n"
    chapters[9] += f"\nIn the last years {SECOND_EXCERPT}.\n"
    return "# Lighthouses\n" + "".join(chapters)


@pytest.fixture(scope="module")
def stocked(ui_stack) -> dict:
    """The long document processed at 256 and 512 tokens, a question set on it, and two
    finished retrieval-only experiments of two configurations each."""
    document_id = upload(ui_stack, NAME, long_document())
    lab = ui_stack.client()
    for size in SIZES:
        spec = to_spec("fixed_size", {"chunk_size": size, "chunk_overlap": 0})
        assert lab.process(document_id, [spec]).strategies_completed
    lines = [
        {"question": QUESTION, "references": [{"document": NAME, "content": EXCERPT}]},
        {"question": SECOND, "references": [{"document": NAME, "content": SECOND_EXCERPT}]},
    ]
    question_set = lab.import_question_set(
        "".join(json.dumps(line) + "\n" for line in lines).encode(), name="numbers.jsonl"
    )
    grid = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=n) for n in SIZES]),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
        ],
    )
    finished = []
    for name in EXPERIMENTS:
        config = evaluator_pb2.ExperimentConfig(
            name=name,
            question_set_id=question_set.question_set_id,
            strategies=[grid],
            retrieval_only=True,
            retrieval=common_pb2.RetrievalOptions(top_k=3),
        )
        *_, last = lab.run_experiment(config)
        assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, last.experiment.error
        finished.append(last.experiment)
    return {"document_id": document_id, "experiments": finished}


@pytest.fixture(autouse=True)
def patient():
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    yield
    expect.set_options(timeout=5_000)


def _columns_of_512(page):
    """Search side by side with the 512-token set only, top_k 3, on the long document."""
    from playwright.sync_api import expect

    choose(page, "query-documents", re.compile(rf"^{re.escape(NAME)} "))
    page.locator("#query-top-k input").fill("3")
    page.locator("#query-configurations .remove-all").click()
    choose(page, "query-configurations", re.compile(r"^fixed_size · chunk_overlap=0, chunk_size=512 · "))
    page.locator("#side-by-side-button").click()
    column = page.locator("#query-columns section.cl-column[data-state=done]")
    expect(column).to_have_count(1)
    return column


def test_a_typed_question_and_one_from_a_set_count_tokens_sent_alike(stocked, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Query").click()
    choose(page, "query-question-set", re.compile(r"^numbers\.jsonl · "))
    choose(page, "query-question-pick", re.compile(r"^How many gulls"))
    expect(page.locator("#query-text textarea")).to_have_value(QUESTION)
    column = _columns_of_512(page)
    expect(column.locator(".cl-column-measures")).to_be_visible()  # a question from a set: measured
    picked = column.locator(".cl-tokens-sent").inner_text()
    assert THOUSANDS.match(picked), picked
    screenshot(page, "numbers-query-picked")

    # The same page, a question typed by hand: no references, the same count the same way.
    page.locator("#query-text textarea").fill(TYPED)
    page.locator("#side-by-side-button").click()
    column = page.locator("#query-columns section.cl-column[data-state=done]")
    expect(column.locator(".cl-column-measures")).to_have_count(0)
    typed = column.locator(".cl-tokens-sent").inner_text()
    assert THOUSANDS.match(typed) and ".000" not in typed, typed
    assert typed == picked  # three chunks of 512 tokens either way
    # Each chunk's own count and the latency read the same way too.
    for tokens in column.locator(".cl-flat-list .cl-tokens").all_inner_texts():
        assert re.fullmatch(r"\d{1,3}(,\d{3})* tokens", tokens), tokens
    assert re.fullmatch(r"\d+ ms|\d+\.\d s", column.locator(".cl-latency").inner_text())
    screenshot(page, "numbers-query-typed")


def _tooltip_of_a_point(page, plot, run: str = "") -> str:
    """The Vega tooltip of the plot's first point (of a run whose label holds `run`), as a
    person hovering over it reads it: once the plot is drawn and no update is under way
    (Gradio's progress overlay, while it shows, lies over the plot and takes the pointer, so
    Vega would never see it arrive)."""
    from playwright.sync_api import expect

    labelled = f"[aria-label*='{run}']" if run else ""  # Vega labels a point with its tooltip's text
    point = plot.locator(f"g.mark-symbol.role-mark path{labelled}").first
    point.wait_for()
    expect(plot.get_by_test_id("status-tracker")).to_have_class(re.compile(r"\bhide\b"))
    point.hover(force=True)
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for(state="visible")
    return tooltip.inner_text()


def test_the_experiments_page_counts_questions_per_configuration_and_tokens_with_separators(stocked, page):
    from playwright.sync_api import expect

    first = stocked["experiments"][0]
    page.get_by_role("tab", name="Experiments").click()
    row = page.locator(f"#experiments-table tr[data-experiment-id='{first.experiment_id}']")
    expect(row).to_contain_text("2 questions × 2 configurations")
    assert "4/4" not in row.inner_text()
    choose(page, "detail-experiment", re.compile(rf"^{EXPERIMENTS[0]} · "))
    summary = page.locator(f"#detail-summary .cl-experiment[data-experiment-id='{first.experiment_id}']")
    expect(summary).to_contain_text("2 questions × 2 configurations")
    table = summary.locator("table.cl-runs-table")
    tokens = [cells[-1] for cells in (r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all())]
    assert any(re.fullmatch(r"\d{1,3}(,\d{3})+", t) for t in tokens), tokens  # 3 × 512 tokens: 1,536
    assert not any(LONG_DECIMALS.search(t) for t in tokens), tokens

    plot = page.locator("#experiment-tradeoff-plot")
    expect(plot).to_contain_text("recall against tokens sent")
    shown = _tooltip_of_a_point(page, plot)
    assert "tokens sent per question" in shown and not LONG_DECIMALS.search(shown), shown
    # The axis ticks of tokens carry the separator.
    ticks = plot.locator("g.role-axis-label text").evaluate_all("ts => ts.map(t => t.textContent)")
    assert any("," in t for t in ticks), ticks
    screenshot(page, "numbers-experiments")


def test_compare_writes_tokens_and_the_tradeoff_tooltip_like_the_tables(stocked, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Compare").click()
    result = page.locator("#compare-result")
    # The page opens on the newest pair compared (numbers B, then A); the two chosen the other way.
    expect(result.locator(".cl-compare-columns th[data-letter=A]")).to_contain_text(EXPERIMENTS[1])
    expect(result.get_by_test_id("status-tracker")).to_have_class(re.compile(r"\bhide\b"))
    select = page.locator("#compare-select")
    select.locator(".remove-all").click()
    for name in EXPERIMENTS:
        choose(page, "compare-select", re.compile(rf"^{name} · "))
    page.locator("#compare-button").click()
    # Shown once the first chosen heads the first column (its runs are the plots' "A · …").
    expect(result.locator(".cl-compare-columns th[data-letter=A]")).to_contain_text(EXPERIMENTS[0])
    expect(result).to_contain_text("2 questions × 2 configurations")
    tokens = result.locator("details.cl-metric[data-metric=tokens_sent]")
    expect(tokens).to_be_visible()
    tokens.locator("summary").click()
    assert re.search(r"\d{1,3}(,\d{3})+", tokens.inner_text()), tokens.inner_text()
    assert not LONG_DECIMALS.search(result.inner_text())
    # The 512-token runs send three chunks of 512 tokens a question: a whole count, as the tables
    # have it (Gradio's tooltip prints the plotted number without Vega's axis format, so "1536").
    shown = _tooltip_of_a_point(page, page.locator("#compare-tradeoff-plot"), run="fixed_size 512/0")
    assert not LONG_DECIMALS.search(shown), shown
    assert re.search(r"tokens sent per question\s+1,?536\s", shown), shown
    assert re.search(r"run\s+[AB] · fixed_size 512/0", shown), shown  # named as the columns' letters
    screenshot(page, "numbers-compare")


def test_the_boundary_histograms_name_their_configuration_in_full(stocked, page):
    """A histogram's heading once was the plot's one-line title, cut at the half-width plot's edge."""
    from playwright.sync_api import expect

    documents_part(page, "Upload and list")
    choose(page, "document-select", re.compile(rf"^{re.escape(NAME)} · "))
    documents_part(page, "Boundaries")
    expect(page.locator("#documents-boundaries-selected")).to_contain_text(f"Selected document: {NAME} · ")
    page.locator("#viewer-right-source").get_by_text("Index set", exact=True).click()
    choose(page, "viewer-right-set", re.compile(r"^fixed_size · chunk_overlap=0, chunk_size=512 · "))
    page.locator("#viewer-button").click()
    page.locator("#viewer .cl-sbs").wait_for()
    for side in ("left", "right"):
        histogram = page.locator(f"#viewer-{side}-histogram")
        expect(histogram).to_contain_text(": chunks by tokens")
        heading = histogram.get_by_text(re.compile(r": chunks by tokens$")).first
        # The whole heading is laid out inside the block: wrapped, never cut.
        assert heading.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), heading.inner_text()
        box, block = heading.bounding_box(), histogram.bounding_box()
        assert box["x"] + box["width"] <= block["x"] + block["width"] + 1
    facts = page.locator("#viewer-summary [data-side=right] [data-fact=chunks]").inner_text()
    assert re.search(r"max 512\b", facts) and not LONG_DECIMALS.search(facts), facts
    page.locator("#viewer-left-histogram").scroll_into_view_if_needed()
    screenshot(page, "numbers-histograms")
