"""The winner rule as a user sees it (issue 27, items 1 and 5; ADR 0080, 0081), in a
headless browser against the whole stack. Two experiments on the storms questions are
run once through the client, as another client would:

- "storms dominated": fixed_size at 64 and then 24 tokens. Both find every reference;
  the 24-token run sends fewer tokens, so the 64-token run, listed first, is dominated
  and must never be called the winner.
- "storms tie": markdown_structure at 400 and 800 tokens. Every section of the document
  is shorter than either, so both cut the same chunks and score the same: a tie, the
  leaders named, no winner and no "copy the winner" button.

Then the managerial report: one sentence, three numbers, one plot, no wide table.
Each test saves a screenshot under .chunklab/screenshots/."""

from __future__ import annotations

import json
import re

import pytest

from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.browser import QUESTIONS, choose, screenshot

pytestmark = pytest.mark.browser
WAIT_MS = 30_000  # what a check waits for the page on a busy machine (Playwright's default is 5 s)

DOMINATED, TIE = "storms dominated", "storms tie"
SMALL, LARGE = "fixed_size[chunk_size=24,chunk_overlap=0]", "fixed_size[chunk_size=64,chunk_overlap=0]"
SECTIONS_400, SECTIONS_800 = "markdown_structure[max_tokens=400]", "markdown_structure[max_tokens=800]"


def grid(strategy: str, **knobs: list[int]) -> evaluator_pb2.StrategyGrid:
    return evaluator_pb2.StrategyGrid(
        strategy=strategy,
        grid=[
            evaluator_pb2.KnobGrid(knob=knob, values=[common_pb2.KnobValue(int_value=n) for n in values])
            for knob, values in knobs.items()
        ],
    )


@pytest.fixture(scope="module")
def experiments(ui_stack, storms) -> dict[str, evaluator_pb2.Experiment]:
    """The two finished experiments by name, on the storms questions."""
    lab = ui_stack.client()
    question_set = lab.import_question_set(
        "".join(json.dumps(q) + "\n" for q in QUESTIONS).encode(), name="storm-winners.jsonl"
    )
    finished = {}
    for name, strategy in (
        (DOMINATED, grid("fixed_size", chunk_size=[64, 24], chunk_overlap=[0])),
        (TIE, grid("markdown_structure", max_tokens=[400, 800])),
    ):
        config = evaluator_pb2.ExperimentConfig(
            name=name,
            question_set_id=question_set.question_set_id,
            strategies=[strategy],
            retrieval_only=True,
            retrieval=common_pb2.RetrievalOptions(top_k=2),
            # Two questions: too few to hold some out; chosen and scored on both (the section says so).
            validation=evaluator_pb2.Validation(mode=evaluator_pb2.VALIDATION_MODE_NONE),
        )
        *_, last = lab.run_experiment(config)
        assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, last.experiment.error
        finished[name] = lab.get_experiment(last.experiment.experiment_id, without_results=True)
    return finished


@pytest.fixture(autouse=True)
def patient():
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    yield
    expect.set_options(timeout=5_000)


def open_detail(page, experiment: evaluator_pb2.Experiment):
    page.get_by_role("tab", name="Experiments").click()
    choose(page, "detail-experiment", re.compile(rf"^{experiment.config.name} · "))
    summary = page.locator(f"#detail-summary .cl-experiment[data-experiment-id='{experiment.experiment_id}']")
    summary.wait_for()
    return summary


def test_a_dominated_run_listed_first_is_not_the_winner(experiments, page):
    from playwright.sync_api import expect

    found = experiments[DOMINATED]
    assert [r.run_key for r in found.runs] == [LARGE, SMALL]  # the dominated run is listed first
    summary = open_detail(page, found)
    verdict = summary.locator("p.verdict")
    expect(verdict).to_contain_text(f"{SMALL} is the winner: it ties {LARGE} on recall (100.0% vs 100.0%)")
    expect(verdict).to_contain_text("fewer tokens")
    expect(verdict).to_have_attribute("data-clear", "yes")
    assert f"{LARGE} is the winner" not in verdict.inner_text() and " won" not in verdict.inner_text()
    expect(summary.locator(f"tr[data-verdict-run='{LARGE}'] td").first).to_have_text(f"{LARGE} · beaten by {SMALL}")
    expect(summary.locator(f"tr[data-verdict-run='{SMALL}'] td").first).to_have_text(f"{SMALL} · winner")
    # The hold-out section names the same run; "copy the winner" is offered, for it.
    expect(summary.locator(".cl-winner p.validation")).to_contain_text(f"{SMALL} was chosen and scored on the same 2")
    copy = page.locator("#winner-code")
    expect(copy).to_be_visible()
    copy.get_by_text("Copy the winner's settings").click()
    expect(page.locator("#winner-code-note")).to_contain_text(f"{SMALL} won")
    screenshot(page, "winner-dominated-leader")


def test_a_tie_names_the_leaders_and_offers_no_winner_to_copy(experiments, page):
    from playwright.sync_api import expect

    found = experiments[TIE]
    summary = open_detail(page, found)
    verdict = summary.locator("p.verdict")
    expect(verdict).to_contain_text(f"No clear winner on recall: {SECTIONS_400} and {SECTIONS_800} share the lead")
    expect(verdict).to_have_attribute("data-clear", "no")
    for key in (SECTIONS_400, SECTIONS_800):
        expect(summary.locator(f"tr[data-verdict-run='{key}'] td").first).to_have_text(f"{key} · leader")
    expect(summary.locator(".cl-winner p.validation")).to_contain_text(
        "there is no single winner to confirm or to copy"
    )
    expect(page.locator("#winner-code")).to_be_hidden()
    screenshot(page, "winner-tie")


def open_report(page, experiment_id: str):
    page.get_by_role("tab", name="Reports").click()
    choose(page, "report-experiment", re.compile(experiment_id[:8]))
    page.locator("#report-view").get_by_text("managerial", exact=True).click()
    page.locator("#report-open").click()
    page.locator("#report-frame iframe[data-view=managerial]").wait_for()
    return page.frame_locator("#report-frame iframe")


def test_the_managerial_report_is_a_sentence_three_numbers_and_a_plot_that_fit_the_page(experiments, page):
    from playwright.sync_api import expect

    report = open_report(page, experiments[DOMINATED].experiment_id)
    sentence = report.locator("p.recommendation")
    expect(sentence).to_contain_text(f"Use {SMALL}: it finds as much as {LARGE} (recall 100.0% vs 100.0%)")
    numbers = report.locator(".headline-numbers .number span")
    expect(numbers).to_have_text(["recall", "tokens sent per question", "IoU"])
    assert report.locator("#managerial figure svg").count() == 1
    assert report.locator("#managerial table").count() == 0  # the full table is in the technical view
    labels = report.locator("#managerial svg text").all_text_contents()
    assert "fixed_size 24 (recommended)" in labels and "fixed_size 64" in labels, labels
    body = report.locator("body")
    assert body.evaluate(
        "b => b.ownerDocument.documentElement.scrollWidth <= b.ownerDocument.documentElement.clientWidth"
    )
    screenshot(page, "report-managerial-recommendation")

    tie = open_report(page, experiments[TIE].experiment_id)
    expect(tie.locator("p.recommendation")).to_contain_text(
        f"No clear winner: {SECTIONS_400} and {SECTIONS_800} are level on recall"
    )
    expect(tie.locator(".headline-numbers")).to_have_count(2)
    screenshot(page, "report-managerial-tie")
