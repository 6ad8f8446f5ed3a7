"""Find the best configuration (issue 29, item 3; ADR 0116) as a person uses it, in a headless
browser against the whole stack and the real study (no fake evaluator): two documents and a
hand-made set of ten questions, a budget of a few trials; the page shows the trials so far and
the best so far while the search runs, then the winner beside the recommendation and the
baseline on the questions it was not chosen on, per document; "make active" makes its index
set the one queries search, "copy as code" gives its settings, and "Open in Compare" shows the
study's trials against its first. Screenshots under .chunklab/screenshots/."""

from __future__ import annotations

import re

import pytest

from tests.support import study_docs
from tests.support.browser import SECONDS, choose, fill, plot_points, screenshot, upload

pytestmark = pytest.mark.browser
TRIALS = 4
LONG = 40


@pytest.fixture(scope="module")
def study_inputs(ui_stack) -> dict[str, str]:
    """The documents by name (their ids) and the question set, uploaded as another client would."""
    ids = {name: upload(ui_stack, name, text) for name, text in study_docs.DOCUMENTS.items()}
    ui_stack.client().import_question_set(study_docs.questions_jsonl().encode(), name="harbour-and-light.jsonl")
    return ids


def test_a_small_study_runs_end_to_end_and_its_winner_is_made_active_copied_and_compared(page, ui_stack, study_inputs):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Find the best configuration").click()
    choose(page, "tune-question-set", re.compile(r"^harbour-and-light\.jsonl · 10 questions"))
    for name in study_docs.DOCUMENTS:
        choose(page, "tune-documents", re.compile(rf"^{re.escape(name)}"))
    fill(page, "tune-trials", str(TRIALS))
    fill(page, "tune-minutes", "10")
    page.locator("#tune-start").click()

    # While it searches: the trials so far, what it does, the best so far; the plot fills in.
    running = page.locator("#tune-status .cl-study[data-state=running]:not([data-trials='0'])")
    expect(running).to_contain_text("best so far:", timeout=300 * SECONDS)
    expect(running).to_contain_text(re.compile(rf"[1-{TRIALS}]/{TRIALS} trials"))
    expect(page.locator("#tune-plot")).to_be_visible()
    screenshot(page, "tune-1-progress")

    # The result: the winner, the static recommendation and the baseline on the same confirmation
    # questions, each measure with its 95% interval; why, document by document.
    result = page.locator("#tune-result .cl-study-result")
    expect(result).to_be_visible(timeout=600 * SECONDS)
    expect(page.locator("#tune-status")).to_contain_text(f"The study is done: {TRIALS} trials in")
    roles = result.locator(".cl-study-candidates tbody tr")
    expect(roles).to_have_count(3)
    expect(roles.locator("td:first-child")).to_have_text(
        [re.compile(r"^winner"), re.compile(r"^static recommendation"), re.compile(r"^fixed_size baseline")]
    )
    expect(result).to_contain_text("tuned on 5 questions, confirmed on 5 other questions")
    recall = roles.first.locator("td").nth(2)
    expect(recall).to_have_text(re.compile(r"^\d+\.\d% \[\d+\.\d%, \d+\.\d%\]$"))
    expect(result.locator(".cl-study-lead")).to_contain_text("Lead over the static recommendation on recall")
    documents = result.locator(".cl-study-documents tbody tr")
    expect(documents).to_have_count(2)
    assert sorted(documents.locator("td:first-child").all_inner_texts()) == sorted(study_docs.DOCUMENTS)
    expect(documents.locator("td:nth-child(2)")).to_have_text(["5", "5"])  # five questions about each
    result.locator(".cl-study-trials summary").click()
    expect(result.locator(".cl-study-trials tbody tr")).to_have_count(TRIALS)
    # Every trial is a point on the plot, each in its colour (a kind that first came with a later
    # trial, "pruned" say, was drawn without one).
    assert plot_points(page.locator("#tune-plot")) == (TRIALS, TRIALS)
    expect(result.locator(".cl-study-trials tbody tr").first).to_contain_text("the static recommendation")
    first_trial = result.locator(".cl-study-trials tbody tr").first.locator("code").inner_text()
    winner = result.get_attribute("data-take-home")  # the winner, or the recommendation where it holds
    assert winner, "the study offers a configuration to take home"
    expect(result.locator(".cl-study-take-home")).to_contain_text("Take home the ")
    screenshot(page, "tune-2-result")

    # Copy as code: the winner's strategy, its knobs and its retrieval settings.
    page.locator("#tune-code").get_by_text("Copy its settings as code").click()
    strategy = winner.split("[", 1)[0]
    expect(page.locator("#tune-code-chunklab")).to_contain_text(f"to_spec('{strategy}'")

    # Make active: queries without a config_id now search the winner's set in both documents.
    page.locator("#tune-make-active").click()
    expect(page.locator("#tune-action-status")).to_contain_text(f"{winner} is now the active index set of 2 documents")
    lab = ui_stack.client()
    for document_id in study_inputs.values():
        active = [s for s in lab.list_indexed_sets(strategy=strategy, document_id=document_id) if s.active]
        assert len(active) == 1, active
    screenshot(page, "tune-3-made-active")

    # Open in Compare: the study alone, its trials against its first (the recommendation).
    page.locator("#tune-open-compare").click()
    expect(page.get_by_role("tab", name="Compare", exact=True)).to_have_attribute("aria-selected", "true")
    compared = page.locator("#compare-result")
    expect(compared).to_contain_text(winner, timeout=60 * SECONDS)
    expect(compared).to_contain_text(f"Baseline: study of harbour-and-light.jsonl: {first_trial}")
    expect(page.locator("#compare-plot-metric")).to_be_visible()
    expect(compared).not_to_have_class(re.compile(r"\bpending\b"))
    screenshot(page, "tune-4-compare")
    assert page.evaluate("window.__chunklab_xss") is None


def test_a_cancelled_study_keeps_its_trials_and_resume_goes_on_to_its_budget(page, study_inputs):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Find the best configuration").click()
    choose(page, "tune-question-set", re.compile(r"^harbour-and-light\.jsonl · 10 questions"))
    fill(page, "tune-trials", str(LONG))  # long enough to be stopped midway, small documents or not
    fill(page, "tune-seed", "7")
    page.locator("#tune-start").click()
    expect(page.locator("#tune-status .cl-study[data-state=running]:not([data-trials='0'])")).to_be_visible(
        timeout=300 * SECONDS
    )
    page.locator("#tune-cancel").click()
    status = page.locator("#tune-status")
    expect(status).to_contain_text("The study was stopped after", timeout=300 * SECONDS)
    expect(status).to_contain_text("Its trials are kept: Resume goes on from them")
    stopped_at = int(re.search(r"after (\d+) trials?", status.inner_text()).group(1))
    assert 1 <= stopped_at < LONG
    expect(page.locator("#tune-resume")).to_be_enabled()
    screenshot(page, "tune-5-cancelled")

    page.locator("#tune-resume").click()
    expect(status).to_contain_text(f"The study is done: {LONG} trials in", timeout=600 * SECONDS)
    expect(page.locator("#tune-result .cl-study-trials tbody tr")).to_have_count(LONG)
    expect(page.locator("#tune-resume")).to_be_disabled()
