"""The Question sets page in a real headless browser against the whole stack
and the scripted chat server: a set generated from an uploaded document, its
excerpts highlighted in review, and an experiment run on it from the
Experiments page (issue 16's "Done when", from the UI)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from chunklab.v1 import evaluator_pb2
from tests.support.browser import DOCUMENT, SECONDS, choose, experiment_grids, fill, upload
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.browser

# Where the screenshot lands (ignored by git, with the stack's other local data).
SCREENSHOTS = Path(__file__).resolve().parents[2] / ".chunklab" / "screenshots"
WAIT_S = 60
HILLTOPS = "The first lighthouses were fires lit on hilltops"
WICKIES = "which is why keepers were called wickies"
TIMERS = "Electric lamps and automatic timers replaced the keepers"
# One reply per passage (the document is cut into three strata, one passage each).
REPLIES = [
    {"question": "What were the first lighthouses?", "answer": "Fires on hilltops", "excerpts": [HILLTOPS]},
    {
        "question": "Why were lighthouse keepers nicknamed after a lamp part?",
        "answer": "They trimmed the wick",
        "excerpts": [WICKIES],
    },
    {"question": "What took over the keepers' work?", "answer": "Electric lamps and timers", "excerpts": [TIMERS]},
]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def passage_replies(first_call_waits: threading.Event):
    """The reply whose excerpt is in the asked passage; the first call waits for the event
    (a model still writing while the user cancels)."""
    calls = []

    def responder(messages, model):
        calls.append(model)
        if len(calls) == 1:
            first_call_waits.wait(WAIT_S)
        asked = " ".join(str(m.get("content", "")) for m in messages)
        return json.dumps(next(r for r in REPLIES if r["excerpts"][0] in asked))

    return responder


def test_a_set_generated_from_a_document_is_reviewed_and_used_by_an_experiment(page, ui_stack, tmp_path):
    from playwright.sync_api import expect

    upload(ui_stack, "lighthouse-questions.md", DOCUMENT)
    page.get_by_role("tab", name="Question sets").click()
    release = threading.Event()
    with FakeOpenAI() as llm:
        llm.responder = passage_replies(release)
        choose(page, "gen-documents", "lighthouse-questions.md")
        fill(page, "gen-count", "3")
        fill(page, "gen-seed", "3")
        page.locator("#tab-questions").get_by_text("Chat endpoint").click()
        fill(page, "gen-base-url", llm.base_url)
        fill(page, "gen-model", "fake-chat")
        expect(page.locator("#gen-generator")).to_contain_text(f"fake-chat at {llm.base_url}")
        expect(page.locator("#gen-cancel")).to_be_disabled()

        page.locator("#gen-dry-run").click()
        estimate = page.locator("#gen-status .cl-generation")
        expect(estimate).to_contain_text("Dry run: nothing was called or stored.")
        expect(estimate.locator("td[data-fact='LLM calls']")).to_have_text("3")
        assert llm.calls == []

        # Cancelled while the model writes the first question: the passage in flight is kept.
        page.locator("#gen-start").click()
        expect(page.locator("#gen-status .cl-generation[data-state=running]")).to_contain_text("0/3 passages")
        page.locator("#gen-cancel").click()
        expect(page.locator("#gen-cancel-status")).to_contain_text("Cancelling")
        release.set()
        stopped = page.locator("#gen-status .cl-generation[data-state=interrupted]")
        expect(stopped).to_contain_text("Resume asks the remaining passages")
        expect(page.locator("#gen-cancel")).to_be_disabled()
        generation_id = stopped.get_attribute("data-generation-id")
        lab = ui_stack.client()
        wait_for(
            lambda: lab.get_generation(generation_id).state == evaluator_pb2.GENERATION_STATE_INTERRUPTED,
            "the evaluator to finish the passage in flight",
        )
        expect(page.locator("#gen-resume-id input, #gen-resume-id textarea").first).to_have_value(generation_id)

        page.locator("#gen-resume").click()
        done = page.locator("#gen-status .cl-generation[data-state=succeeded]")
        expect(done).to_be_visible(timeout=120 * SECONDS)
        expect(done.locator("td[data-count=kept]")).to_have_text("3")
        expect(done.locator("td[data-count=failed]")).to_have_text("0")
        assert len([c for c in llm.calls if c["path"].endswith("/chat/completions")]) == 3
    expect(page.locator("#gen-cancel")).to_be_disabled()

    # The stored set is under review: each question with its excerpt marked in the document.
    expect(page.locator("#review-set input")).to_have_value(re.compile(r"^generated from lighthouse-questions\.md"))
    view = page.locator("#review-view .cl-review")
    expect(view.locator("h4")).to_have_text(REPLIES[0]["question"])
    expect(view.locator("mark")).to_have_text(HILLTOPS)
    expect(view.locator(".cl-expected")).to_contain_text("Fires on hilltops")
    page.locator("#review-next").click()
    expect(view.locator("h4")).to_have_text(REPLIES[1]["question"])
    expect(view.locator("mark")).to_have_text(WICKIES)
    expect(view.locator(".cl-excerpt")).to_contain_text("A keeper trimmed the wick every four hours, " + WICKIES)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#tab-questions").screenshot(path=str(SCREENSHOTS / "question-set-review.png"))

    # A refused edit says what to fix, as a sentence; a pasted excerpt adds a question, snapped to the text.
    fill(page, "review-excerpts", "keepers were nicknamed wickies by sailors of the purple sea")
    page.locator("#review-save").click()
    refusal = page.locator("#review-status")  # said in place, not in a toast that times out
    expect(refusal).to_contain_text("The excerpt is not in lighthouse-questions.md")
    expect(refusal).to_contain_text("the closest span")
    assert "INVALID_ARGUMENT" not in refusal.inner_text()
    fill(page, "review-text", "What did keepers write in the logbook?")
    fill(page, "review-answer", "the weather")
    fill(page, "review-excerpts", "wrote the weathr in the logbook")
    choose(page, "review-document", re.compile(r"^lighthouse-questions\.md"))
    page.locator("#review-add").click()
    expect(page.locator("#review-status")).to_contain_text("Added as question 4. Excerpt snapped to the closest span")
    expect(view.locator("mark")).to_have_text("wrote the weather in the logbook")

    # A broken file: validated first (each problem with its closest span and fix), then imported leniently.
    broken = tmp_path / "broken-questions.jsonl"
    broken.write_text(
        "".join(
            json.dumps(q) + "\n"
            for q in [
                {
                    "question": "Who polished the brass?",
                    "references": [{"document": "lighthouse-questions.md", "content": "They polished the brass"}],
                },
                {
                    "question": "What did the mayor own?",
                    "references": [
                        {"document": "lighthouse-questions.md", "content": "The mayor owned three purple elephants"}
                    ],
                },
            ]
        )
    )
    page.locator("#qimport-file input[type=file]").set_input_files(str(broken))
    page.locator(f'#qimport-file a[href$="/{broken.name}"]').wait_for()
    page.locator("#qimport-validate").click()
    problem = page.locator("#qimport-report tr[data-line='2'][data-left-out=true]")
    expect(problem).to_contain_text("not found")
    expect(problem).to_contain_text("does not occur in 'lighthouse-questions.md'; the closest span")
    page.locator("#qimport-import").click()
    expect(page.locator("#qimport-status")).to_have_text(
        "Imported broken-questions.jsonl: 1 of 2 questions; 1 left out: see the report."
    )

    # The Experiments page runs on the generated set.
    experiment_grids(page)
    choose(page, "qs-select", re.compile(r"^generated from lighthouse-questions\.md"))
    page.locator("#exp-use-cluster_parent_child input").uncheck()  # ticked beside fixed_size (ADR 0064)
    fill(page, "grid-fixed_size-chunk_size", "40")
    fill(page, "grid-fixed_size-chunk_overlap", "0")
    fill(page, "exp-name", "generated set")
    page.locator("#run-button").click()
    ran = page.locator("#experiment-status .cl-experiment[data-state=succeeded]")
    expect(ran).to_be_visible(timeout=120 * SECONDS)
    expect(ran.locator("tr[data-run-key] td").nth(1)).to_have_text("4/4")
