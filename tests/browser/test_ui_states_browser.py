"""States that say what happened, in a real headless browser against the whole stack
(issue 27, item 4; ADRs 0087 and 0088): an experiment where one run failed is "partial",
in amber, with the failed run's reason beside it and Resume offered; the dry run says which
runs cannot run before anything starts. The stack has no LLM endpoint configured, so
contextual_retrieval (an LLM strategy) fails to process, every time. Each test saves a
screenshot under .chunklab/screenshots/."""

from __future__ import annotations

import json
import re

import pytest

from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.browser import QUESTIONS, SECONDS, choose, experiment_grids, screenshot

pytestmark = pytest.mark.browser
NAME = "storms half failed"
AMBER = "rgb(252, 211, 77)"  # .cl-state-partial's background


@pytest.fixture(scope="module")
def question_set(ui_stack, storms) -> evaluator_pb2.QuestionSet:
    return ui_stack.client().import_question_set(
        "".join(json.dumps(q) + "\n" for q in QUESTIONS).encode(), name="storm-states.jsonl"
    )


@pytest.fixture(scope="module")
def half_failed(ui_stack, question_set) -> evaluator_pb2.Experiment:
    """fixed_size runs; contextual_retrieval cannot (no LLM): a partial experiment, run through gRPC."""
    config = evaluator_pb2.ExperimentConfig(
        name=NAME,
        question_set_id=question_set.question_set_id,
        strategies=[
            evaluator_pb2.StrategyGrid(
                strategy="fixed_size",
                grid=[
                    evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=32)]),
                    evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
                ],
            ),
            evaluator_pb2.StrategyGrid(strategy="contextual_retrieval"),
        ],
        retrieval_only=True,
        retrieval=common_pb2.RetrievalOptions(top_k=2),
    )
    *_, last = ui_stack.client().run_experiment(config)
    assert last.experiment.state == evaluator_pb2.EXPERIMENT_STATE_PARTIAL, last.experiment.error
    return last.experiment


@pytest.fixture(autouse=True)
def patient():
    from playwright.sync_api import expect

    expect.set_options(timeout=60 * SECONDS)
    yield
    expect.set_options(timeout=5 * SECONDS)


def test_a_partial_experiment_is_amber_with_each_failed_runs_reason_beside_it(half_failed, page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Experiments").click()
    row = page.locator(f"#experiments-table tr[data-experiment-id='{half_failed.experiment_id}']")
    expect(row).to_have_attribute("data-state", "partial")
    expect(row.locator("td.cl-state-partial")).to_have_text("partial")
    assert row.locator("td.cl-state-partial").evaluate("e => getComputedStyle(e).backgroundColor") == AMBER

    choose(page, "detail-experiment", re.compile(rf"^{NAME} · partial · "))
    summary = page.locator(f"#detail-summary .cl-experiment[data-experiment-id='{half_failed.experiment_id}']")
    expect(summary).to_have_attribute("data-state", "partial")
    state = summary.locator(".cl-experiment-head .cl-state-partial")
    expect(state).to_have_text("partial")
    assert state.evaluate("e => getComputedStyle(e).backgroundColor") == AMBER
    # What happened, in one amber line above the table, and beside the run that failed.
    expect(summary.locator(".cl-partial")).to_contain_text("1 of 2 runs did not finish every question")
    failed = summary.locator("tr[data-failed=true]")
    expect(failed.locator("code")).to_have_text(re.compile(r"^contextual_retrieval"))
    expect(failed.locator(".cl-run-failure")).to_contain_text("failed: contextual_retrieval could not process")
    expect(failed.locator(".cl-run-failure")).to_contain_text("no LLM endpoint is configured")
    finished = summary.locator("tr[data-run-key='fixed_size[chunk_size=32,chunk_overlap=0]']")
    expect(finished.locator("td").nth(1)).to_have_text("2/2")
    expect(finished.locator(".cl-run-failure")).to_have_count(0)
    # Resume retries the failed run (ADR 0087); nothing runs, so nothing to cancel.
    expect(page.locator("#detail-resume")).to_be_enabled()
    expect(page.locator("#detail-cancel")).to_be_disabled()
    summary.scroll_into_view_if_needed()
    screenshot(page, "experiment-partial")


def test_the_dry_run_says_which_runs_cannot_run_before_anything_starts(question_set, page):
    from playwright.sync_api import expect

    experiment_grids(page)
    choose(page, "qs-select", re.compile(r"^storm-states\.jsonl · "))
    page.locator("#grid-contextual_retrieval").get_by_text("contextual_retrieval").first.click()  # unfold it
    page.locator("#exp-use-contextual_retrieval input").check()
    page.locator("#dry-run-button").click()
    estimate = page.locator("#experiment-status .cl-estimate")
    expect(estimate).to_contain_text("Dry run: nothing was called or stored.")
    warnings = estimate.locator(".cl-estimate-warnings")
    expect(warnings).to_contain_text("Runs that cannot run as planned")
    expect(warnings).to_contain_text(
        re.compile(r"contextual_retrieval\S* cannot run: it needs an LLM to chunk, and the chunker has no LLM endpoint")
    )
    expect(estimate.locator("td[data-fact='estimated time']")).to_contain_text(re.compile(r"^about \d+ (s|min)"))
    expect(estimate.locator("td[data-fact='index sets to process']")).to_contain_text("already there")
    warnings.scroll_into_view_if_needed()
    screenshot(page, "dry-run-warnings")
