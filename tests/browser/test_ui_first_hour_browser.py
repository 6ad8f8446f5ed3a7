"""The first hour, in a browser (issue 27, item 7): from an empty data folder (this module's
stack loads no sample), Start here leads through uploading a document, writing a question
set by hand (each passage selected in the document's text), running an experiment over
two strategies, and to the winner's settings to take home; Compare and Reports open on
what there is. A screenshot per step."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import SECONDS, choose, fill, screenshot

pytestmark = pytest.mark.browser

# Accents and characters outside the BMP before the passages: the browser counts UTF-16 units,
# the document's offsets count code points, and the excerpts must land on the words selected.
TEXT = """# Phare du Cap 🌊🚢

Le gardien réglait la mèche à l’aube. 🕯️ Ça brûlait toute la nuit.

## History

The first lighthouses were fires lit on hilltops to guide ships home. Over centuries they became
towers of stone with oil lamps and polished reflectors.

## The lens

Augustin Fresnel invented a lens in 1822 made of concentric prisms. It bent light into a narrow beam
that could be seen for twenty miles.

## Daily duties

A keeper trimmed the wick every four hours, which is why keepers were called wickies. They polished
the brass and wrote the weather in the logbook <img src=x onerror="window.__chunklab_xss=1">.

## Automation

Electric lamps and automatic timers replaced the keepers during the twentieth century.
"""

HAND_WRITTEN = [
    ("Quand le gardien réglait-il la mèche ?", "Le gardien réglait la mèche à l’aube"),
    ("What were the first lighthouses?", "fires lit on hilltops to guide ships home"),
    ("Who invented the lens made of concentric prisms?", "Augustin Fresnel invented a lens in 1822"),
    ("How far could the beam be seen?", "could be seen for twenty miles"),
    ("Why were keepers called wickies?", "trimmed the wick every four hours"),
    ("What replaced the keepers?", "Electric lamps and automatic timers replaced the keepers"),
]

# Selects the passage's words in the document's text as a person's drag would: a DOM range
# over the text node that holds them (offsets there are the DOM's own, in UTF-16 units).
SELECT_JS = """(words) => {
    const box = document.querySelector('#hand-text .cl-hand-text');
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.data.indexOf(words);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + words.length);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        return true;
    }
    return false;
}"""


def start_here(page, expected: list[str]) -> None:
    """Opens Start here and waits until its steps show these states (read from the stack)."""
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Start here", exact=True).click()
    for number, state in enumerate(expected, 1):
        expect(page.locator(f"#start-steps [data-step='{number}']")).to_have_attribute(
            "data-state", state, timeout=60 * SECONDS
        )


def step_one_upload(page, tmp_path) -> None:
    from playwright.sync_api import expect

    start_here(page, ["next", "todo", "todo", "todo"])
    expect(page.locator("#start-steps .cl-step-next-line")).to_contain_text("Upload documents")
    screenshot(page, "first-hour-1-start-here")
    page.locator("#start-go-1").click()
    expect(page.locator("#upload-button")).to_be_visible()
    document = tmp_path / "phare.md"
    document.write_text(TEXT, encoding="utf-8")
    page.locator("#upload-file input[type=file]").set_input_files(str(document))
    page.locator('#upload-file a[href$="/phare.md"]').wait_for()
    page.locator("#upload-button").click()
    expect(page.locator("#upload-status")).to_contain_text("Uploaded phare.md")
    screenshot(page, "first-hour-2-uploaded")


def add_question(page, question: str, words: str, count: int) -> None:
    from playwright.sync_api import expect

    assert page.evaluate(SELECT_JS, words), words
    page.locator("#hand-use-selection").click()
    expect(page.locator("#hand-passage .cl-excerpt")).to_have_text(words)
    fill(page, "hand-question", question)
    page.locator("#hand-add").click()
    expect(page.locator("#hand-draft tr[data-question]")).to_have_count(count)


def step_two_write_questions(page, ui_stack) -> None:
    from playwright.sync_api import expect

    start_here(page, ["done", "next", "todo", "todo"])
    page.locator("#start-go-2").click()
    # No set yet: the section to write one by hand is open; the person picks the document.
    choose(page, "hand-document", re.compile(r"^phare\.md · "))
    text = page.locator("#hand-text .cl-hand-text")
    expect(text).to_contain_text("Augustin Fresnel", timeout=60 * SECONDS)
    assert page.locator("#hand-text img, #hand-text script").count() == 0
    # Refusals name their field: nothing selected, no question, a question asked twice.
    page.locator("#hand-add").click()
    expect(page.locator("#hand-status")).to_contain_text("Passage: select the passage")
    assert page.evaluate(SELECT_JS, HAND_WRITTEN[0][1])
    page.locator("#hand-use-selection").click()
    expect(page.locator("#hand-passage .cl-excerpt")).to_have_text(HAND_WRITTEN[0][1])
    page.locator("#hand-add").click()
    expect(page.locator("#hand-status")).to_contain_text("Question: type the question")
    for count, (question, words) in enumerate(HAND_WRITTEN[:3], 1):
        add_question(page, question, words, count)
    # A new start of the UI and a reload lose nothing: the browser kept the draft, under the key
    # the data folder keeps (ADR 0156), and the page says so.
    ui_stack.kill("ui")
    ui_stack.restart("ui")
    page.reload()
    start_here(page, ["done", "next", "todo", "todo"])
    page.locator("#start-go-2").click()
    expect(page.locator("#hand-status")).to_contain_text("Your draft of 3 questions is not saved yet")
    expect(page.locator("#hand-draft tr[data-question]")).to_have_count(3)
    expect(page.locator("#hand-text mark.cl-hand-mark")).to_have_count(3, timeout=60 * SECONDS)
    for count, (question, words) in enumerate(HAND_WRITTEN[3:], 4):
        add_question(page, question, words, count)
    assert page.evaluate(SELECT_JS, "polished reflectors")
    page.locator("#hand-use-selection").click()
    fill(page, "hand-question", HAND_WRITTEN[1][0].upper())
    page.locator("#hand-add").click()
    expect(page.locator("#hand-status")).to_contain_text("is already question 2 of this set")
    expect(page.locator("#hand-text mark.cl-hand-mark")).to_have_count(len(HAND_WRITTEN))
    screenshot(page, "first-hour-3-questions-by-hand")
    fill(page, "hand-name", "phare by hand")
    page.locator("#hand-save").click()
    expect(page.locator("#hand-status")).to_contain_text(f"Saved “phare by hand” with {len(HAND_WRITTEN)} questions")

    # Stored as selected: every excerpt is the document's text at its offsets, after the emoji.
    lab = ui_stack.client()
    (stored,) = lab.list_question_sets()
    questions = lab.get_question_set(stored.question_set_id).questions
    document = lab.get_document_text(questions[0].references[0].document_id).text
    for question, (text_asked, words) in zip(questions, HAND_WRITTEN, strict=True):
        (reference,) = question.references
        assert question.text == text_asked
        assert document[reference.start_char : reference.end_char] == reference.content == words


def step_three_experiment(page) -> None:
    from playwright.sync_api import expect

    start_here(page, ["done", "done", "next", "todo"])
    page.locator("#start-go-3").click()
    page.locator("#dry-run-button").wait_for(timeout=120 * SECONDS)  # the strategy grids drawn
    choose(page, "qs-select", re.compile(r"^phare by hand · 6 questions"))
    # The baseline and the recommended strategy start ticked: two configurations to compare.
    page.locator("#exp-retrieval-only input").check()
    fill(page, "exp-name", "first hour")
    page.locator("#run-button").click()
    finished = page.locator(
        "#experiment-status .cl-experiment[data-state=succeeded], #experiment-status .cl-experiment[data-state=partial]"
    )
    expect(finished).to_be_visible(timeout=300 * SECONDS)
    # The verdict names one winner: both runs find every passage, and the recommended strategy
    # sends the context that fits the passages better (the winner rule, ADR 0080).
    verdict = page.locator("#detail-summary p.verdict").first
    expect(verdict).to_have_attribute("data-clear", "yes", timeout=60 * SECONDS)
    expect(verdict).to_have_attribute("data-leaders", "cluster_parent_child")
    expect(verdict).to_contain_text("cluster_parent_child is the winner: it ties fixed_size on recall")
    screenshot(page, "first-hour-4-experiment-verdict")


def step_four_take_it_home(page) -> None:
    from playwright.sync_api import expect

    start_here(page, ["done", "done", "done", "next"])
    expect(page.locator("#start-steps [data-step='3']")).to_contain_text("first hour finished.")
    screenshot(page, "first-hour-5-start-here-done")
    page.locator("#start-go-4").click()
    page.locator("#winner-code").get_by_text("Copy the winner's settings").click()
    note = page.locator("#winner-code-note")
    # The winner's settings as code.
    expect(note).to_contain_text("won: its configuration", timeout=60 * SECONDS)
    expect(page.locator("#winner-code")).to_contain_text("cluster_parent_child")
    screenshot(page, "first-hour-6-take-it-home")


def test_start_here_leads_from_an_empty_folder_to_a_winner_with_a_hand_written_set(page, ui_stack, tmp_path):
    from playwright.sync_api import expect

    step_one_upload(page, tmp_path)
    step_two_write_questions(page, ui_stack)
    step_three_experiment(page)
    step_four_take_it_home(page)
    assert page.evaluate("window.__chunklab_xss") is None

    # A fresh page: Reports opens on the finished experiment's report; Compare, with one
    # experiment, says what to run to compare.
    page.reload()
    page.locator("#start-steps [data-step]").first.wait_for(timeout=120 * SECONDS)
    page.get_by_role("tab", name="Reports", exact=True).click()
    expect(page.locator("#report-experiment input")).to_have_value(re.compile(r"^first hour · "))
    expect(page.locator("#report-frame iframe")).to_be_visible(timeout=120 * SECONDS)
    screenshot(page, "first-hour-7-reports-open")
    page.get_by_role("tab", name="Compare", exact=True).click()
    expect(page.locator("#compare-result")).to_contain_text("Compare needs two finished experiments")
