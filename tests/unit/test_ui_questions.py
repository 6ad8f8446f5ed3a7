"""The Question sets page without a browser: its views (the question with its
excerpt marked in the document, the validation report, a generation's
estimate and progress, the import's sentence) as exact HTML, and its handlers
against a gateway that answers with hand-built messages."""

from __future__ import annotations

import gradio as gr
import grpc
import pytest

from chunklab.client import ClientError
from chunklab.v1 import documents_pb2
from chunklab.v1 import evaluator_pb2 as E
from frontend.errors import told_as_sentence
from frontend.pages.questions import question_sets as page
from frontend.pages.questions import questions_html as views
from tests.support.fake_stubs import settings

TEXT = "The first lighthouses were fires lit on hilltops. Keepers trimmed the wick every four hours, so they were called wickies."
START, END = TEXT.index("trimmed"), TEXT.index(" every")


def reference(start: int = START, end: int = END) -> E.Reference:
    return E.Reference(document_id="d1", start_char=start, end_char=end, content=TEXT[start:end])


class Gateway:
    """Answers the page's calls with hand-built messages and records what it was asked."""

    def __init__(self, events: list[E.GenerationEvent] = ()):
        self.settings = settings()
        self.events = list(events)
        self.closed = False
        self.updated: list[E.Question] = []

    def get_document_text(self, document_id: str) -> documents_pb2.Document:
        return documents_pb2.Document(document_id=document_id, name="lights.md", text=TEXT)

    def generate_question_set(self, request):
        try:
            yield from self.events
        finally:
            self.closed = True

    def import_question_set(self, path, name, document_ids, excerpt_check):
        self.imported = (path, name, document_ids, excerpt_check)
        return E.QuestionSet(question_set_id="s1", name="notes.jsonl", question_count=1, validation=VALIDATION)

    def update_question(self, question_set_id, question):
        self.updated.append(question)
        return E.QuestionSet(question_set_id=question_set_id, questions=[question])

    def add_question(self, question_set_id, question):
        self.updated.append(question)
        added = E.Question(question_id="q2")
        added.MergeFrom(question)
        return E.QuestionSet(question_set_id=question_set_id, questions=[*HELD.questions, added])


# -- views ----------------------------------------------------------------------


def test_a_question_shows_its_excerpt_marked_in_a_window_of_its_document():
    question = E.Question(
        question_id="q1", text="What did <keepers> trim?", expected_answer="the wick", references=[reference()]
    )
    windows = views.excerpt_windows({"d1": TEXT}, question.references, {"d1": "lights.md"}, window=20)
    assert views.question_html(question, 2, 5, windows) == (
        '<div class="cl-review" data-question-id="q1">\n'
        '<p class="cl-review-count">Question 2 of 5</p>\n'
        "<h4>What did &lt;keepers&gt; trim?</h4>\n"
        '<p class="cl-expected"><b>Expected answer:</b> the wick</p>\n'
        '<blockquote class="cl-excerpt" data-start="58" data-end="74"><small>lights.md, characters 58–74</small>'
        "<br/>…n hilltops. Keepers <mark>trimmed the wick</mark> every four hours, s…</blockquote>\n"
        "</div>"
    )


def test_an_excerpt_at_the_start_of_the_document_has_no_leading_ellipsis():
    [window] = views.excerpt_windows({"d1": TEXT}, [reference(0, 9)], {}, window=5)
    assert (window["before"], window["excerpt"], window["after"]) == ("", "The first", " ligh")
    assert (window["cut_before"], window["cut_after"], window["document"]) == (False, True, "d1")


VALIDATION = E.QuestionSetValidation(
    excerpt_check=E.EXCERPT_CHECK_LENIENT,
    questions_total=3,
    questions_valid=2,
    questions_left_out=1,
    references_total=3,
    references_exact=1,
    references_snapped=1,
    references_failed=1,
    similarity_threshold=0.85,
    problems=[
        E.ExcerptProblem(
            where="line 3",
            line=3,
            question_number=3,
            reference_number=1,
            document_id="d1",
            excerpt="the mayor owns elephants",
            kind=E.EXCERPT_PROBLEM_KIND_NOT_FOUND,
            start_char=0,
            end_char=9,
            suggested_content="The first",
            similarity=0.31,
            message="not found: the closest span is 31% alike",
            left_out=True,
        )
    ],
)


def test_the_validation_report_lists_each_problem_with_its_closest_span_and_fix():
    html = views.validation_html(VALIDATION)
    assert ("<p>3 questions, 2 would be imported, 1 left out; 3 excerpts: 1 exact, 1 snapped, 1 not found.") in html
    assert (
        '<tr data-line="3" data-left-out="true"><td>3</td><td>3.1</td><td>the mayor owns elephants</td>'
        "<td>not found</td><td>The first</td><td>31%</td><td>not found: the closest span is 31% alike</td></tr>"
    ) in html
    clean = views.validation_html(E.QuestionSetValidation(questions_total=2, questions_valid=2))
    assert '<p class="cl-message cl-message-ok">Every excerpt occurs exactly.</p>' in clean


def test_an_import_says_how_many_questions_were_left_out():
    lenient = E.QuestionSet(
        question_set_id="s1",
        name="notes.jsonl",
        question_count=46,
        validation=E.QuestionSetValidation(questions_total=50, questions_left_out=4),
    )
    assert views.import_message(lenient) == "Imported notes.jsonl: 46 of 50 questions; 4 left out: see the report."
    whole = E.QuestionSet(
        question_set_id="s2",
        name="notes.jsonl",
        question_count=50,
        validation=E.QuestionSetValidation(questions_total=50),
    )
    assert views.import_message(whole) == "Imported notes.jsonl: 50 questions (id s2)."


def test_the_generator_named_is_the_forms_endpoint_else_the_stacks():
    gateway = Gateway()
    assert page.configured_generator(gateway, "", "") == ("none configured: fill in the endpoint's base URL and model")
    assert page.configured_generator(gateway, " http://llm/v1 ", "") == "gpt-4o-mini at http://llm/v1"
    gateway.settings = gateway.settings.model_copy(update={"llm_base_url": "http://stack/v1", "llm_model": "m2"})
    assert page.configured_generator(gateway, "", "") == "m2 at http://stack/v1"


def test_the_dry_run_shows_calls_tokens_and_cost():
    estimate = E.GenerationEstimate(
        documents=1, passages=5, llm_calls=5, prompt_tokens=1200, completion_tokens=750, estimated_cost_usd=0.0012
    )
    html = views.estimate_html(estimate, "fake at http://x/v1")
    assert '<p class="cl-generator">Generator: fake at http://x/v1</p>' in html
    assert '<tr><th>LLM calls</th><td data-fact="LLM calls">5</td></tr>' in html
    assert '<tr><th>estimated cost</th><td data-fact="estimated cost">$0.0012</td></tr>' in html


def progress(done: int, kept: int, dropped: int = 0, failed: int = 0) -> E.GenerationEvent:
    drops = [E.DropCount(reason=E.DROP_REASON_DUPLICATE, count=dropped)]
    return E.GenerationEvent(
        progress=E.GenerationProgress(
            generation_id="g1",
            passages_done=done,
            passages_total=3,
            kept=kept,
            dropped=drops,
            failed=failed,
            message=f"passage {done}/3 of lights.md",
        )
    )


def test_progress_counts_passages_kept_dropped_by_reason_and_failed():
    html = views.progress_html(views.progress_view(progress(2, 1, 1).progress), "m at u")
    assert '<p class="cl-generation-head">running: 2/3 passages (passage 2/3 of lights.md)</p>' in html
    assert (
        '<tr><th>kept</th><td data-count="kept">1</td></tr>\n'
        '<tr><th>dropped: near-duplicate</th><td data-count="dropped">1</td></tr>\n'
        '<tr><th>failed</th><td data-count="failed">0</td></tr>'
    ) in html


HELD = E.QuestionSet(
    question_set_id="s1",
    questions=[E.Question(question_id="q1", text="What did keepers trim?", references=[reference()])],
)


# -- handlers -------------------------------------------------------------------


def test_a_generation_streams_its_progress_and_ends_with_the_stored_set():
    done = E.Generation(
        generation_id="g1",
        state=E.GENERATION_STATE_SUCCEEDED,
        passages_total=3,
        asked=3,
        kept=2,
        failed=1,
        question_set_id="s9",
        outcomes=[E.PassageOutcome(passage_number=3, outcome=E.GENERATION_OUTCOME_FAILED, problem="not JSON twice")],
    )
    gateway = Gateway([progress(1, 1), progress(2, 2), progress(3, 2, failed=1), E.GenerationEvent(generation=done)])
    request = page.generation_request(["d1"], 3, 7, "", "", "", "")
    shown = list(page.follow_generation(gateway, request, "m at u"))
    assert [gen_id for _, gen_id in shown] == ["", "g1", "g1", "g1", "g1"]
    assert 'data-state="succeeded"' in shown[-1][0]
    assert "Stored as question set s9" in shown[-1][0]
    assert '<li data-passage="3">passage 3: not JSON twice</li>' in shown[-1][0]
    assert gateway.closed


def test_cancel_stops_the_stream_after_the_passage_in_flight():
    gateway = Gateway([progress(1, 1), progress(2, 2), progress(3, 3)])
    shown = page.follow_generation(gateway, page.generation_request(["d1"], 3, 0, "", "", "", ""), "m at u", "t1")
    next(shown), next(shown)  # started, passage 1 done
    page.cancel("t1")
    html, _ = next(shown)  # passage 2 arrives: shown as interrupted, and the stream ends
    assert 'data-state="interrupted"' in html and "2/3 passages (cancelled)" in html
    assert list(shown) == [] and gateway.closed and "t1" not in page._cancelling


def test_the_form_says_what_is_missing():
    with pytest.raises(gr.Error, match="Choose at least one document"):
        page.generation_request([], 3, 0, "", "", "", "")
    with pytest.raises(gr.Error, match="whole numbers: 2.5 is not a whole number"):
        page.generation_request(["d1"], 2.5, 0, "", "", "", "")
    with pytest.raises(gr.Error, match="No chat endpoint is configured to generate with: fill in its Base URL"):
        page.require_endpoint(Gateway(), "  ")
    page.require_endpoint(Gateway(), "http://llm/v1")
    request = page.generation_request([], 3, 0, "", "http://llm/v1", "m", "k", resume_id="g1")
    assert (request.resume_generation_id, request.generator_model.base_url) == ("g1", "http://llm/v1")


def test_a_pasted_excerpt_is_located_exactly_or_snapped_with_its_similarity():
    gateway = Gateway()
    ref, how = page.located_excerpt(gateway, "d1", "trimmed the wick")
    assert (ref.start_char, ref.end_char, ref.content) == (START, END, "trimmed the wick")
    assert how == "Excerpt found exactly in lights.md, characters 58–74."
    ref, how = page.located_excerpt(gateway, "d1", "Keepers trimed the wick every four hours")
    assert ref.content == "Keepers trimmed the wick every four hours"
    assert TEXT[ref.start_char : ref.end_char] == ref.content
    assert how == "Excerpt snapped to the closest span (99% alike) in lights.md, characters 50–91."
    with pytest.raises(gr.Error, match="The excerpt is not in lights.md: the closest span"):
        page.located_excerpt(gateway, "d1", "purple elephants dance on the moon at midnight")


def test_an_edit_keeps_each_excerpts_document_and_asks_the_evaluator_to_locate_it():
    current = E.Question(question_id="q1", text="old", references=[reference()], metadata={"topic": "wicks"})
    edited = page.edited_question(
        current, " What did keepers trim? ", "the wick", "trimmed the wick\n---\nwickies", "d2"
    )
    assert [(r.document_id, r.content, r.start_char, r.end_char) for r in edited.references] == [
        ("d1", "trimmed the wick", 0, 0),
        ("d2", "wickies", 0, 0),
    ]
    assert (edited.question_id, edited.text, edited.metadata["topic"]) == ("q1", "What did keepers trim?", "wicks")
    with pytest.raises(gr.Error, match="at least one excerpt"):
        page.edited_question(current, "text", "", " \n---\n ", None)


def test_previous_and_next_stay_inside_the_set():
    question_set = E.QuestionSet(questions=[E.Question(question_id=i) for i in ("a", "b", "c")])
    assert [page.step(question_set, q, by) for q, by in (("a", -1), ("a", 1), ("c", 1), ("b", -1))] == [
        "a",
        "b",
        "c",
        "a",
    ]
    assert page.step(E.QuestionSet(), None, 1) is None


def test_an_edited_excerpt_is_stored_at_its_exact_span_or_refused_with_its_closest_one():
    gateway = Gateway()
    edited = page.edited_question(
        E.Question(question_id="q1", references=[reference()]),
        "What did keepers trim?",
        "",
        "Keepers trimed the wick every four hours",
        None,
    )
    placed, how = page.located(gateway, edited)
    assert [(r.start_char, r.end_char, r.content) for r in placed.references] == [
        (50, 91, "Keepers trimmed the wick every four hours")
    ]
    assert how == "Excerpt snapped to the closest span (99% alike) in lights.md, characters 50–91."
    refused = page.edited_question(
        E.Question(question_id="q1", references=[reference()]), "q", "", "sailors of the purple sea", None
    )
    with pytest.raises(gr.Error) as raised:
        page.located(gateway, refused)
    assert str(raised.value.message).startswith("The excerpt is not in lights.md: the closest span, ")


def test_a_lenient_import_asks_for_it_and_shows_the_report():
    gateway = Gateway()
    message, report, set_id = page.import_file(gateway, "/tmp/notes.jsonl", "", "wikitexts=d7", True)
    assert gateway.imported == ("/tmp/notes.jsonl", "", {"wikitexts": "d7"}, E.EXCERPT_CHECK_LENIENT)
    assert message == (
        '<div class="cl-message cl-message-ok">'
        "Imported notes.jsonl: 1 of 3 questions; 1 left out: see the report.</div>"
    )
    assert '<tr data-line="3" data-left-out="true">' in report and set_id == "s1"
    with pytest.raises(gr.Error, match="In the box Corpus ids to document ids: "):
        page.import_file(gateway, "/tmp/notes.jsonl", "", "no equals sign", False)
    with pytest.raises(gr.Error, match="Choose a .jsonl or .csv file"):
        page.validate_file(gateway, None, "", "", True)


def test_a_refusal_reads_as_the_services_sentence_without_its_status():
    refusal = ClientError(
        "evaluator service: FAILED_PRECONDITION: question set s1 is used by experiment e1",
        service="evaluator",
        code=grpc.StatusCode.FAILED_PRECONDITION,
        details="question set s1 is used by experiment e1",
    )
    with pytest.raises(gr.Error) as raised, told_as_sentence():
        raise refusal
    assert raised.value.message == "Question set s1 is used by experiment e1."
    away = ClientError(
        "The evaluator service at 127.0.0.1:4 is unreachable or too slow (UNAVAILABLE): refused",
        service="evaluator",
        code=grpc.StatusCode.UNAVAILABLE,
        details="refused",
    )
    with pytest.raises(gr.Error) as raised, told_as_sentence():
        raise away
    assert raised.value.message == away.message


def test_a_saved_edit_is_sent_located_and_the_review_shows_it_again():
    gateway = Gateway()
    outputs = page.save(
        gateway,
        HELD.SerializeToString(),
        "q1",
        "What did keepers trim?",
        "the wick",
        "Keepers trimed the wick every four hours",
        None,
    )
    [sent] = gateway.updated
    assert [(r.document_id, r.start_char, r.end_char) for r in sent.references] == [("d1", 50, 91)]
    data, choices, view, text, answer, excerpt_box, status = outputs
    assert choices["value"] == "q1" and (text, answer) == ("What did keepers trim?", "the wick")
    assert "<mark>Keepers trimmed the wick every four hours</mark>" in view
    assert excerpt_box == "Keepers trimmed the wick every four hours"
    assert status == (
        '<div class="cl-message cl-message-ok">Saved. Excerpt snapped to the closest span '
        "(99% alike) in lights.md, characters 50–91.</div>"
    )


def test_an_added_question_takes_the_chosen_document_and_opens_in_the_review():
    gateway = Gateway()
    outputs = page.add(gateway, HELD.SerializeToString(), "Who were the wickies?", "", "called wickies", "d1")
    [sent] = gateway.updated
    assert [(r.document_id, r.content) for r in sent.references] == [("d1", "called wickies")]
    assert outputs[1]["value"] == "q2"
    assert "Question 2 of 2" in outputs[2]
    assert outputs[-1].endswith("Added as question 2. Excerpt found exactly in lights.md, characters 106–120.</div>")
    with pytest.raises(gr.Error, match="Choose the document"):
        page.add(gateway, HELD.SerializeToString(), "Who?", "", "wickies", None)
