"""The first hour's pure parts (issue 27, item 7): a question set written by hand (the
passage between the selection's offsets, exact by construction, and the refusals that name
their field), Start here's steps from what the stack holds, and what Compare and Reports
open on. Hand-built messages; no server, no browser."""

from __future__ import annotations

import gradio as gr
import pytest

from chunklab.v1 import documents_pb2, evaluator_pb2
from frontend.pages.questions import by_hand
from frontend.pages.questions.hand_section import pieces
from frontend.pages.start import steps
from frontend.views.opening import newest_finished, opening_pair

# Characters outside the BMP (one code point, two UTF-16 units) and accents before the passage:
# offsets in code points, as Python counts, must still land on the passage.
TEXT = "# Phare 🌊🚢\n\nLe gardien régla la mèche à 4 h. 🕯️\n\nThe keeper trimmed the wick every four hours.\n"
PASSAGE = "trimmed the wick every four hours"


def test_a_passage_is_the_documents_text_between_the_offsets_after_non_ascii_text():
    start = TEXT.index(PASSAGE)
    assert len(TEXT[:start].encode("utf-16-le")) // 2 > start  # the browser's units would overshoot
    found = by_hand.passage_at(TEXT, start, start + len(PASSAGE), PASSAGE)
    assert (found.start, found.end, found.text) == (start, start + len(PASSAGE), PASSAGE)
    assert TEXT[found.start : found.end] == found.text


def test_a_selection_with_white_space_at_its_edges_is_trimmed_to_the_words():
    start = TEXT.index(PASSAGE) - 1
    selected = TEXT[start : start + len(PASSAGE) + 3]  # " trimmed … hours.\n"
    found = by_hand.passage_at(TEXT, start, start + len(selected), selected)
    assert found.text == TEXT[found.start : found.end] == PASSAGE + "."


@pytest.mark.parametrize(
    ("start", "end", "selected", "says"),
    [
        (None, None, "", "Passage: select the passage"),
        (5, 5, "", "Passage: characters 5 to 5 are not a passage"),
        (0, 10_000, "", "Passage: characters 0 to 10000"),
        (2, 7, "something else", "Passage: the selection does not match"),
        (TEXT.index("\n\n"), TEXT.index("\n\n") + 2, "\n\n", "Passage: the selection is only white space"),
    ],
)
def test_a_bad_selection_is_refused_naming_the_passage(start, end, selected, says):
    with pytest.raises(gr.Error) as refused:
        by_hand.passage_at(TEXT, start, end, selected)
    assert refused.value.message.startswith(says)


def passage() -> by_hand.Passage:
    start = TEXT.index(PASSAGE)
    return by_hand.Passage(start, start + len(PASSAGE), PASSAGE)


def test_questions_are_added_to_the_draft_with_their_exact_reference():
    draft = by_hand.added([], "  How often was the wick trimmed? ", "every four hours", "doc-1", passage())
    (question,) = by_hand.questions(draft)
    (reference,) = question.references
    assert question.text == "How often was the wick trimmed?" and question.expected_answer == "every four hours"
    assert reference.document_id == "doc-1"
    assert TEXT[reference.start_char : reference.end_char] == reference.content == PASSAGE


@pytest.mark.parametrize(
    ("question", "document", "says"),
    [
        ("   ", "doc-1", "Question: type the question"),
        (
            "how OFTEN was the   wick trimmed?",
            "doc-1",
            "Question: “how OFTEN was the   wick trimmed?” is already question 1",
        ),
        ("Who kept the light?", None, "Document: choose the document"),
    ],
)
def test_an_empty_or_repeated_question_is_refused_naming_its_field(question, document, says):
    draft = by_hand.added([], "How often was the wick trimmed?", "", "doc-1", passage())
    with pytest.raises(gr.Error) as refused:
        by_hand.added(draft, question, "", document, passage())
    assert refused.value.message.startswith(says)


class Recording:
    """A client that keeps the set it was asked to create."""

    def __init__(self):
        self.created = None

    def create_question_set(self, name, questions, description=""):
        self.created = (name, list(questions))
        return evaluator_pb2.QuestionSet(question_set_id="qs-1", name=name, questions=self.created[1])


def test_saving_needs_questions_and_a_name_and_sends_the_draft_as_it_is():
    gateway = Recording()
    with pytest.raises(gr.Error) as refused:
        by_hand.saved(gateway, "Lighthouse", [])
    assert refused.value.message.startswith("Question: add at least one question")
    draft = by_hand.added([], "How often was the wick trimmed?", "", "doc-1", passage())
    with pytest.raises(gr.Error) as refused:
        by_hand.saved(gateway, "  ", draft)
    assert refused.value.message.startswith("Set name: name the question set")
    stored = by_hand.saved(gateway, " Lighthouse ", draft)
    assert stored.name == "Lighthouse" and gateway.created[1][0].references[0].content == PASSAGE


def test_the_drafts_passages_are_marked_in_the_document_and_the_text_stays_whole():
    draft = by_hand.added([], "How often was the wick trimmed?", "", "doc-1", passage())
    cut = pieces(TEXT, draft, "doc-1")
    assert "".join(p["text"] for p in cut) == TEXT
    assert [p["text"] for p in cut if p["marked"]] == [PASSAGE]
    assert [p["marked"] for p in pieces(TEXT, draft, "doc-2")] == [False]


# -- Start here ----------------------------------------------------------------------------

SUCCEEDED, RUNNING = evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, evaluator_pb2.EXPERIMENT_STATE_RUNNING


def experiment(experiment_id: str, state=SUCCEEDED, runs: int = 2, questions: str = "h1") -> evaluator_pb2.Experiment:
    return evaluator_pb2.Experiment(
        experiment_id=experiment_id,
        state=state,
        question_set_hash=questions,
        config=evaluator_pb2.ExperimentConfig(name=f"exp {experiment_id}"),
        runs=[evaluator_pb2.ExperimentRun(run_key=f"run{i}") for i in range(runs)],
    )


DOCUMENT = documents_pb2.Document(document_id="d1", name="lighthouse.md")
QUESTION_SET = evaluator_pb2.QuestionSet(question_set_id="q1", name="by hand", question_count=5)


def states(found: list[steps.Step]) -> list[str]:
    return [s.state for s in found]


def test_an_empty_stack_starts_on_uploading_documents():
    found = steps.steps([], [], [])
    assert states(found) == ["next", "todo", "todo", "todo"]
    assert [s.tab for s in found] == ["documents", "questions", "experiments", "experiments"]


def test_each_step_is_done_by_what_the_stack_holds_and_the_first_left_is_next():
    assert states(steps.steps([DOCUMENT], [], [])) == ["done", "next", "todo", "todo"]
    assert states(steps.steps([DOCUMENT], [QUESTION_SET], [])) == ["done", "done", "next", "todo"]
    running = steps.steps([DOCUMENT], [QUESTION_SET], [experiment("e1", RUNNING)])
    assert states(running) == ["done", "done", "next", "todo"] and "is running" in running[2].detail
    one_run = steps.steps([DOCUMENT], [QUESTION_SET], [experiment("e1", runs=1)])
    assert states(one_run)[2] == "next"  # one configuration is not a comparison
    finished = steps.steps([DOCUMENT], [QUESTION_SET], [experiment("e1")], "run0 has the highest recall.")
    assert states(finished) == ["done", "done", "done", "next"]
    assert finished[2].detail == "exp e1 finished. run0 has the highest recall."
    assert "lighthouse.md" in finished[0].detail and "by hand" in finished[1].detail
    assert finished[3].button == "Copy the winner's settings"


def test_take_it_home_says_there_is_no_winner_to_copy_when_leaders_share_the_lead():
    tied = steps.steps([DOCUMENT], [QUESTION_SET], [experiment("e1")], "No clear winner on recall.", ["a", "b"])
    assert states(tied) == ["done", "done", "done", "next"]
    assert tied[3].button == "See the leaders" and tied[3].tab == "experiments"
    assert tied[3].detail.startswith("No single winner to copy: a and b share the lead.")
    one = steps.steps([DOCUMENT], [QUESTION_SET], [experiment("e1")], "a is the winner.", ["a"])
    assert one[3].button == "Copy the winner's settings" and "Copy the winner's settings as code" in one[3].detail


def test_a_deleted_document_makes_the_first_step_next_again():
    assert states(steps.steps([], [QUESTION_SET], [experiment("e1")])) == ["next", "done", "done", "todo"]


# -- what Compare and Reports open on ---------------------------------------------------------


def test_reports_open_on_the_newest_experiment_that_compared_configurations():
    listed = [experiment("new", RUNNING), experiment("single", runs=1), experiment("done"), experiment("old")]
    assert newest_finished(listed).experiment_id == "done"
    assert newest_finished([experiment("new", RUNNING)]) is None


def test_compare_opens_on_the_newest_finished_pair_on_the_same_question_set():
    listed = [
        experiment("running", RUNNING),
        experiment("newest"),
        experiment("other-questions", questions="h2"),
        experiment("same-questions"),
    ]
    assert opening_pair(listed) == ["newest", "same-questions"]
    assert opening_pair([experiment("a"), experiment("b", questions="h2")]) == ["a", "b"]
    assert opening_pair([experiment("a"), experiment("b", RUNNING)]) == []


def test_the_drafts_key_is_kept_in_the_data_folder_so_a_new_start_of_the_ui_reads_the_draft(tmp_path):
    """Gradio would make a new key for each process, and a restarted UI could not read the
    draft the browser kept (ADR 0156): the key is made once per data folder, readable by its
    owner only, and every UI started on that folder, at once or later, uses it."""
    import os
    import stat
    from concurrent.futures import ThreadPoolExecutor

    from frontend import browser_secret
    from frontend.pages.questions import hand_section

    folder = tmp_path / "data"
    with ThreadPoolExecutor(4) as pool:
        keys = set(pool.map(lambda _: browser_secret.kept(folder), range(8)))
    (key,) = keys
    assert len(key) >= 32
    path = folder / browser_secret.FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir()) == [browser_secret.FILE]  # no draft left behind
    assert browser_secret.kept(folder) == key
    assert browser_secret.kept(tmp_path / "other") != key
    with gr.Blocks():
        assert hand_section.hand_section(key).draft.secret == key
