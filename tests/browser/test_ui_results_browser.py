"""Results you can see, in a real headless browser against the whole stack: an
experiment's plots and verdict, Compare with its plots and verdict, and the
report in both views (issue 18, items 3, 6 and 8). Two experiments are run once
for the module through gRPC, as another client would; what the tests are about
goes through the UI. Each test saves a screenshot under .chunklab/screenshots/.
"""

from __future__ import annotations

import json
import re

import pytest

from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.browser import QUESTIONS, SECONDS, choose, plot_points, screenshot

pytestmark = pytest.mark.browser
WAIT_MS = 30_000  # what a check waits for the page on a busy machine (Playwright's default is 5 s)

SIZES = "storms sizes"  # fixed_size 24 and 64 tokens: two runs, so a verdict and wins per question
NEIGHBOURS = "storms ±1"  # fixed_size 24 with one neighbour each side
# Both sizes find every reference (recall 100%); the smaller sends fewer tokens: it wins (ADR 0080).
VERDICT = (
    "fixed_size[chunk_size=24,chunk_overlap=0] is the winner: it ties fixed_size[chunk_size=64,chunk_overlap=0] "
    "on recall (100.0% vs 100.0%)"
)


def grid(*sizes: int) -> evaluator_pb2.StrategyGrid:
    return evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=n) for n in sizes]),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
        ],
    )


@pytest.fixture(scope="module")
def experiments(ui_stack, storms) -> dict[str, evaluator_pb2.Experiment]:
    """The two finished experiments by name, on the storms questions."""
    lab = ui_stack.client()
    question_set = lab.import_question_set(
        "".join(json.dumps(q) + "\n" for q in QUESTIONS).encode(), name="storm-results.jsonl"
    )
    finished = {}
    for name, strategy, neighbours in ((SIZES, grid(24, 64), 0), (NEIGHBOURS, grid(24), 1)):
        config = evaluator_pb2.ExperimentConfig(
            name=name,
            question_set_id=question_set.question_set_id,
            strategies=[strategy],
            retrieval_only=True,
            retrieval=common_pb2.RetrievalOptions(top_k=2, neighbor_prev=neighbours, neighbor_next=neighbours),
        )
        *_, last = lab.run_experiment(config)
        assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, last.experiment.error
        finished[name] = last.experiment
    return finished


@pytest.fixture(autouse=True)
def patient():
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    yield
    expect.set_options(timeout=5_000)


def test_an_experiments_results_show_its_verdict_plots_and_a_table_that_fits(experiments, page):
    from playwright.sync_api import expect

    sizes = experiments[SIZES]
    page.get_by_role("tab", name="Experiments").click()
    row = page.locator("#experiments-table tr[data-experiment-id]").filter(has_text=SIZES)
    expect(row).to_contain_text("fixed_size (2 runs)")
    expect(page.locator("#experiments-table tr[data-experiment-id]").filter(has_text=NEIGHBOURS)).to_contain_text(
        "fixed_size (1 run)"
    )
    choose(page, "detail-experiment", re.compile(rf"^{SIZES} · "))
    summary = page.locator(f"#detail-summary .cl-experiment[data-experiment-id='{sizes.experiment_id}']")
    expect(summary).to_be_visible()

    # The verdict is one honest sentence: tied on recall, the winner is the run no other beats on
    # IoU or tokens sent, and the sentence says why.
    verdict = summary.locator("p.verdict")
    expect(verdict).to_contain_text(VERDICT)
    expect(verdict).to_contain_text("fewer tokens (")
    expect(verdict).to_contain_text("The best trade-offs (Pareto front)")
    assert "_" not in re.sub(r"fixed_size\[[^\]]*\]|fixed_size", "", verdict.inner_text())  # no field names
    # Retrieval-only: no LLM calls or cost columns, and the table fits its box.
    heads = summary.locator("table.cl-runs-table th").all_inner_texts()
    assert heads[-2:] == ["chunks / q", "tokens / q"] and "IoU (hits only)" in heads
    assert not any("_" in h for h in heads), heads
    assert summary.locator(".cl-scroll").evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    # The chosen experiment's label is not cut under the dropdown's arrow.
    assert page.locator("#detail-experiment input").evaluate("e => e.scrollWidth <= e.clientWidth + 1")

    # Recall against tokens: one point per run, each in its colour (the experiment shown on opening
    # the tab has its one run on the front: the run beaten on both came with a colour the plot had
    # not drawn, and was invisible); the means as bars; wins and losses of the pair.
    tradeoff = page.locator("#experiment-tradeoff-plot")
    expect(tradeoff).to_contain_text("recall against tokens sent")
    assert plot_points(tradeoff) == (2, 2)
    means = page.locator("#experiment-means-plot")
    expect(means).to_contain_text("recall: mean per run")
    assert means.locator("g.mark-rect.role-mark path").count() == 2
    expect(page.locator("#experiment-means-table")).to_contain_text("%")
    wins = page.locator("#experiment-wins-plot")
    expect(wins).to_contain_text("wins, ties and losses on recall")
    # One question's detail: the context the LLM reads, then the tree, headed in words, not field names.
    columns = page.locator("#question-detail .cl-detail-columns > div > b").all_inner_texts()
    assert columns == ["What the LLM sees", "Expansion tree"]
    # Finished: neither Resume nor Cancel can act.
    expect(page.locator("#detail-resume")).to_be_disabled()
    expect(page.locator("#detail-cancel")).to_be_disabled()
    screenshot(page, "experiment-results")


def test_a_chosen_run_shows_its_figures_per_document(experiments, page):
    """Issue 29, item 5: the run chosen in the detail view has a table per document (ADR 0118)."""
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Experiments").click()
    choose(page, "detail-experiment", re.compile(rf"^{SIZES} · "))
    choose(page, "detail-run", "fixed_size[chunk_size=64,chunk_overlap=0]")
    documents = page.locator(
        "#run-documents .cl-run-documents[data-run-key='fixed_size[chunk_size=64,chunk_overlap=0]']"
    )
    expect(documents).to_be_visible()
    heads = documents.locator("table.cl-per-document th").all_inner_texts()
    assert heads == ["document", "collection", "questions", "recall", "precision", "IoU", "tokens / q"]
    rows = documents.locator("table.cl-per-document tbody tr")
    expect(rows).to_have_count(1)  # the storms questions all point into storms.md
    cells = rows.first.locator("td").all_inner_texts()
    # Both questions' excerpts lie in storms.md, and the run finds both (recall 100%).
    assert cells[:4] == ["storms.md", "default", str(len(QUESTIONS)), "100.0%"], cells
    assert all(cell.strip() for cell in cells) and cells[4].endswith("%") and cells[5].endswith("%")
    assert not documents.locator(".cl-shortfall").count()  # one document: nothing to fall short of
    documents.scroll_into_view_if_needed()
    screenshot(page, "experiment-run-per-document")


def test_compare_shows_both_experiments_with_absolute_and_difference_plots_and_their_verdicts(experiments, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Compare").click()
    # The page opens on the newest pair, here the module's two experiments.
    expect(page.locator("#compare-button")).to_be_enabled()
    page.locator("#compare-button").click()
    result = page.locator("#compare-result")
    expect(result.locator(".cl-warnings[role=alert]")).to_contain_text("neighbour expansion differs")
    # Each column's heading: the letter its runs carry in the plots, then the experiment's title.
    heads = result.locator(".cl-compare-columns thead th[data-letter]")
    titled = {h.get_attribute("data-letter"): h.locator("div").inner_text() for h in heads.all()}
    assert sorted(titled.values()) == sorted([f"A {SIZES}", f"B {NEIGHBOURS}"]) or sorted(titled.values()) == sorted(
        [f"B {SIZES}", f"A {NEIGHBOURS}"]
    ), titled
    sizes_letter = next(letter for letter, text in titled.items() if text.endswith(SIZES))
    # Each column's verdict, and every metric by its label, never its field name.
    verdicts = result.locator(".cl-compare-columns td.cl-verdict").all_inner_texts()
    assert len(verdicts) == 2 and sum("is the only run" in v for v in verdicts) == 1 and "–" not in verdicts
    # IoU: the 64-token run and the ±1 run both differ from the baseline, each with its interval.
    expect(result.locator("details.cl-metric[data-metric=iou] summary")).to_have_text(
        "IoU · 2 of 2 runs clearly differ"
    )
    labels = result.locator("details.cl-metric summary b").all_inner_texts()
    assert "IoU (hits only)" in labels and "tokens sent" in labels
    assert not any("_" in label for label in labels), labels
    # The differences from the baseline: a point and its interval's ends per other run (two of them).
    differences = page.locator("#compare-plot")
    expect(differences).to_contain_text("difference from the baseline (95% CI)")
    assert plot_points(differences) == (3 * 2, 3 * 2)
    # Runs named short enough that Vega does not cut them ("A · fixed_size 64/0", A the column's letter).
    ticks = differences.locator("g.role-axis-label text").evaluate_all("ts => ts.map(t => t.textContent)")
    assert f"{sizes_letter} · fixed_size 64/0" in ticks and not any(t.endswith("…") for t in ticks), ticks
    # The absolute values: each run's mean as a bar, the three runs of both experiments on one trade-off.
    expect(page.locator("#compare-means-plot")).to_contain_text("mean per run")
    assert page.locator("#compare-means-plot g.mark-rect.role-mark path").count() == 3
    assert plot_points(page.locator("#compare-tradeoff-plot")) == (3, 3)
    expect(page.locator("#compare-wins-plot")).to_contain_text("wins, ties and losses on recall")
    screenshot(page, "compare-verdict")


def open_report(page, experiment_id: str, view: str):
    page.get_by_role("tab", name="Reports").click()
    choose(page, "report-experiment", re.compile(experiment_id[:8]))
    page.locator("#report-view").get_by_text(view, exact=True).click()
    page.locator("#report-open").click()
    page.locator(f"#report-frame iframe[data-view={view}]").wait_for()
    return page.frame_locator("#report-frame iframe")


def test_both_report_views_open_as_pages_with_the_verdict_and_the_linked_detail(experiments, page):
    from playwright.sync_api import expect

    sizes = experiments[SIZES]
    page.get_by_role("tab", name="Reports").click()
    # The page opens on the newest finished experiment's managerial report (ADR 0093), with its download.
    expect(page.locator("#report-frame iframe[data-view=managerial]")).to_be_visible(timeout=60 * SECONDS)
    expect(page.locator("#report-file")).to_be_visible()

    # Managerial: a rendered page (its heading, not its source), the recommendation and its plot.
    report = open_report(page, sizes.experiment_id, "managerial")
    expect(report.locator("h1")).to_have_text(SIZES)
    expect(report.locator("p.recommendation")).to_contain_text(
        "Use fixed_size[chunk_size=24,chunk_overlap=0]: it finds as much as fixed_size[chunk_size=64,chunk_overlap=0]"
    )
    assert report.locator("figure svg").count() == 1  # what each run finds against what it sends
    assert "<!DOCTYPE" not in report.locator("body").inner_text()
    assert report.locator("#managerial table").count() == 0  # the full table is in the technical view
    expect(page.locator("#report-file")).to_be_visible()
    assert page.locator("#report-file a").first.get_attribute("href").endswith("-managerial.html")
    screenshot(page, "report-managerial")

    # Technical, in its own tab: a question opens to a row per run; a hit's link leads to where the
    # chunk starts in the document's text, named there; references name their file.
    open_report(page, sizes.experiment_id, "technical")
    with page.context.expect_page() as opened:
        page.locator("#report-frame .cl-report-head a[target=_blank]").click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.evaluate("document.contentType") == "text/html"
    expect(tab.locator("h1")).to_have_text(SIZES)
    question = tab.locator("details.q").first
    expect(question.locator("summary")).to_contain_text(f"Q1. {QUESTIONS[0]['question']} (2 runs)")
    question.locator("summary").click()
    expect(question.locator(".reference .muted").first).to_contain_text("reference · storms.md · chars ")
    rows = question.locator("table.results tbody tr")
    assert rows.count() == 2 and rows.first.locator("td").first.inner_text().startswith("fixed_size[chunk_size=")
    hit = rows.first.locator("td i a").first
    target = hit.get_attribute("href")
    hit.click()
    anchor = tab.locator(f"pre.doc a{target}")
    marker = anchor.evaluate("e => getComputedStyle(e, '::before').content")
    assert marker.startswith('"▸ fixed_size ') and f"chunk {hit.inner_text()} · chars " in marker
    expect(tab.locator("h4").filter(has_text="storms.md")).to_be_visible()
    # The document's text, hostile markup and all, reads as text in the report; nothing ran.
    assert '<img src=x onerror="window.__chunklab_xss=1">' in tab.locator("body").text_content()
    assert tab.locator("body img, body iframe, body script").count() == 0
    assert tab.evaluate("window.__chunklab_xss") is None
    screenshot(tab, "report-technical")
    tab.close()
