"""Imports whose excerpts are checked, strict or lenient, their dry run
(ValidateQuestionSet) and the review's edits (issue 16; ADR 0059), against
the evaluator in this process behind a real gRPC server, its one document
faked (tests/integration/test_question_generation.py)."""

from __future__ import annotations

import json

import grpc
import pytest

from chunklab.v1 import evaluator_pb2 as G
from tests.support.status import status_of
from tests.support.town import DEADLINE_S, FERRY, LIBRARY, MARKET, RIVER, TEXT

PARAPHRASED = "The ferry to Olsen island leaves every two hours from the north pier"
QUESTIONS = "\n".join(
    json.dumps(q)
    for q in [
        {"question": "Which river?", "references": [{"document": "harwick", "content": RIVER}]},  # line 1: exact
        {"question": "How often?", "references": [{"document": "harwick", "content": PARAPHRASED}]},  # 2: snapped
        {
            "question": "What does the mayor own?",  # line 3: not found
            "references": [{"document": "harwick", "content": "The mayor owns three purple elephants."}],
        },
        {
            "question": "When?",
            "references": [  # line 4: one exact, one range that holds other text
                {"document": "harwick", "content": LIBRARY},
                {"document": "harwick", "start": 0, "end": 9, "content": MARKET},
            ],
        },
        {"question": "No references at all"},  # line 5: unlabelled, kept
    ]
).encode()


def header(check: int, name: str = "harwick questions") -> G.ImportHeader:
    return G.ImportHeader(name=name, format=G.QUESTION_SET_FORMAT_JSONL, excerpt_check=check)


def streamed(check: int, data: bytes = QUESTIONS):
    return iter([G.ImportQuestionSetRequest(header=header(check)), G.ImportQuestionSetRequest(data=data)])


def test_validation_reports_every_problem_with_its_closest_span_and_stores_nothing(evaluator):
    stub, _ = evaluator
    report = stub.ValidateQuestionSet(streamed(G.EXCERPT_CHECK_LENIENT), timeout=DEADLINE_S)
    assert (report.questions_total, report.questions_valid, report.questions_left_out) == (5, 4, 1)
    assert (report.references_total, report.references_exact, report.references_snapped, report.references_failed) == (
        5,
        2,
        2,
        1,
    )
    problems = [
        (p.where, p.line, p.question_number, p.reference_number, G.ExcerptProblemKind.Name(p.kind), p.left_out)
        for p in report.problems
    ]
    assert problems == [
        ("line 2", 2, 2, 1, "EXCERPT_PROBLEM_KIND_SNAPPED", False),
        ("line 3", 3, 3, 1, "EXCERPT_PROBLEM_KIND_NOT_FOUND", True),
        ("line 4", 4, 4, 2, "EXCERPT_PROBLEM_KIND_RANGE_MISMATCH", False),
    ]
    snapped, missing, moved = report.problems
    fix = FERRY.removesuffix(".")
    assert (snapped.start_char, snapped.end_char, snapped.suggested_content) == (
        TEXT.index(fix),
        TEXT.index(fix) + len(fix),
        fix,
    )
    # Indel distance: island/Island 2, leaves/departs 7 (their longest common subsequence is "eas"),
    # over the two lengths, 68 + 69.
    assert snapped.similarity == pytest.approx(1 - 9 / 137) and snapped.excerpt == PARAPHRASED
    assert missing.similarity < report.similarity_threshold == 0.85
    assert missing.message.startswith(
        "line 3: the excerpt 'The mayor owns three purple elephants.' does not occur "
        "in 'harwick'; the closest span, text["
    )
    assert (moved.start_char, moved.suggested_content, moved.similarity) == (TEXT.index(MARKET), MARKET, 1.0)
    assert stub.ListQuestionSets(G.ListQuestionSetsRequest(), timeout=DEADLINE_S).question_sets == []


def test_a_strict_import_refuses_the_set_with_the_count_and_the_first_problems(evaluator):
    stub, _ = evaluator
    code, message = status_of(lambda: stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_UNSPECIFIED), timeout=DEADLINE_S))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message.startswith(
        "3 of 5 references are not exactly where the set says, in 3 of 5 questions "
        "(4 could be located, some by a close span): line 2: the excerpt "
    )
    assert message.endswith(
        "`chunklab questions validate` (ValidateQuestionSet) lists every problem with its fix; "
        "a lenient import keeps the located questions"
    )
    assert stub.ListQuestionSets(G.ListQuestionSetsRequest(), timeout=DEADLINE_S).question_sets == []


def test_a_lenient_import_keeps_the_located_questions_and_says_how_many_were_left_out(evaluator):
    stub, _ = evaluator
    stored = stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_LENIENT), timeout=DEADLINE_S)
    assert stored.question_count == 4 and stored.validation.questions_left_out == 1
    assert [q.text for q in stored.questions] == ["Which river?", "How often?", "When?", "No references at all"]
    assert [[r.content for r in q.references] for q in stored.questions] == [
        [RIVER],
        [FERRY.removesuffix(".")],
        [LIBRARY, MARKET],
        [],
    ]
    for question in stored.questions:
        for r in question.references:
            assert TEXT[r.start_char : r.end_char] == r.content
    assert stored.provenance == G.QuestionSetProvenance(origin="imported")
    nothing = b'{"question": "x", "references": [{"document": "harwick", "content": "no such words anywhere"}]}\n'
    code, message = status_of(
        lambda: stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_LENIENT, nothing), timeout=DEADLINE_S)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message.startswith("none of the 1 questions has every excerpt located: line 1: the excerpt ")


def test_questions_are_added_changed_and_removed_with_their_excerpts_located(evaluator):
    stub, _ = evaluator
    created = stub.CreateQuestionSet(
        G.CreateQuestionSetRequest(
            name="review",
            questions=[G.Question(text="Which river?", references=[G.Reference(document_id="d-1", content=RIVER)])],
        ),
        timeout=DEADLINE_S,
    )
    assert created.provenance.origin == "created" and created.validation.references_exact == 1
    added = stub.AddQuestion(
        G.AddQuestionRequest(
            question_set_id=created.question_set_id,
            question=G.Question(
                text="When does the library open?", references=[G.Reference(document_id="d-1", content=LIBRARY)]
            ),
        ),
        timeout=DEADLINE_S,
    )
    assert [q.text for q in added.questions] == ["Which river?", "When does the library open?"]
    assert added.question_count == 2 and added.content_hash != created.content_hash
    first, second = added.questions
    changed = G.Question(
        question_id=first.question_id,
        text="Which river flows past Harwick?",
        references=[G.Reference(document_id="d-1", content=RIVER)],
    )
    updated = stub.UpdateQuestion(
        G.UpdateQuestionRequest(question_set_id=created.question_set_id, question=changed), timeout=DEADLINE_S
    )
    assert [(q.question_id, q.text) for q in updated.questions] == [
        (first.question_id, "Which river flows past Harwick?"),
        (second.question_id, "When does the library open?"),
    ]
    wrong = G.Question(
        question_id=first.question_id, text="x", references=[G.Reference(document_id="d-1", content=PARAPHRASED)]
    )
    code, message = status_of(
        lambda: stub.UpdateQuestion(
            G.UpdateQuestionRequest(question_set_id=created.question_set_id, question=wrong), timeout=DEADLINE_S
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "use it as the content" in message
    removed = stub.DeleteQuestion(
        G.DeleteQuestionRequest(question_set_id=created.question_set_id, question_id=first.question_id),
        timeout=DEADLINE_S,
    )
    assert [q.question_id for q in removed.questions] == [second.question_id] and removed.question_count == 1
    again = stub.GetQuestionSet(G.GetQuestionSetRequest(question_set_id=created.question_set_id), timeout=DEADLINE_S)
    assert again.content_hash == removed.content_hash and [q.text for q in again.questions] == [
        "When does the library open?"
    ]
    assert status_of(
        lambda: stub.DeleteQuestion(
            G.DeleteQuestionRequest(question_set_id=created.question_set_id, question_id=second.question_id),
            timeout=DEADLINE_S,
        )
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "that is the set's last question: delete the set instead")


def test_a_lenient_import_leaves_out_questions_whose_document_is_not_uploaded(evaluator):
    stub, _ = evaluator
    data = (
        QUESTIONS
        + b"\n"
        + json.dumps(
            {"question": "Who wrote it?", "references": [{"document": "wikitexts", "content": "anything"}]}
        ).encode()
    )
    code, message = status_of(
        lambda: stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_STRICT, data), timeout=DEADLINE_S)
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert message == (
        "line 6: no uploaded document is called 'wikitexts'; upload it first, or map 'wikitexts' "
        "to an uploaded document's id (wikitexts=document_id)"
    )
    stored = stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_LENIENT, data), timeout=DEADLINE_S)
    assert (stored.question_count, stored.validation.questions_total, stored.validation.questions_left_out) == (4, 6, 2)
    unknown = stored.validation.problems[-1]
    assert (unknown.line, G.ExcerptProblemKind.Name(unknown.kind), unknown.left_out) == (
        6,
        "EXCERPT_PROBLEM_KIND_NOT_FOUND",
        True,
    )
    assert unknown.message == message


def test_the_same_questions_imported_again_are_the_set_already_stored(evaluator):
    """Each CLI run imports its question file again: the same content is the same set, listed once."""
    stub, _ = evaluator
    data = (
        b'{"question": "Which river runs through it?", "references": [{"document": "harwick", "content": "%s"}]}\n'
        % (RIVER.encode())
    )
    first = stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_STRICT, data), timeout=DEADLINE_S)
    again = stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_STRICT, data), timeout=DEADLINE_S)
    assert again.question_set_id == first.question_set_id and again.content_hash == first.content_hash
    assert [q.question_id for q in again.questions] == [q.question_id for q in first.questions]
    listed = stub.ListQuestionSets(G.ListQuestionSetsRequest(page_size=100), timeout=DEADLINE_S).question_sets
    assert [s.question_set_id for s in listed].count(first.question_set_id) == 1
    assert sum(s.content_hash == first.content_hash for s in listed) == 1


def test_two_questions_with_the_same_id_are_refused_naming_the_id_and_nothing_is_stored(evaluator):
    stub, _ = evaluator
    twice = [G.Question(question_id="q-7", text="Which river?"), G.Question(question_id="q-7", text="How often?")]
    created = status_of(
        lambda: stub.CreateQuestionSet(G.CreateQuestionSetRequest(name="twice", questions=twice), timeout=DEADLINE_S)
    )
    assert created == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "question 2 has the question id 'q-7', as question 1 does: give each question its own id, or none",
    )
    data = (
        b'{"id": "a", "question": "Which river?"}\n{"id": "b", "question": "Why?"}\n{"id": "a", "question": "When?"}\n'
    )
    code, message = status_of(
        lambda: stub.ImportQuestionSet(streamed(G.EXCERPT_CHECK_LENIENT, data), timeout=DEADLINE_S)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "line 3 has the question id 'a', as line 1 does" in message
    listed = stub.ListQuestionSets(G.ListQuestionSetsRequest(page_size=100), timeout=DEADLINE_S).question_sets
    assert not listed


def test_a_question_added_under_an_id_the_set_has_is_refused_and_the_set_keeps_its_questions(evaluator):
    stub, _ = evaluator
    stored = stub.CreateQuestionSet(
        G.CreateQuestionSetRequest(name="one", questions=[G.Question(text="Which river?")]), timeout=DEADLINE_S
    )
    taken = stored.questions[0].question_id
    again = G.Question(question_id=taken, text="How often?")
    code, message = status_of(
        lambda: stub.AddQuestion(
            G.AddQuestionRequest(question_set_id=stored.question_set_id, question=again), timeout=DEADLINE_S
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and f"already has a question '{taken}'" in message
    kept = stub.GetQuestionSet(G.GetQuestionSetRequest(question_set_id=stored.question_set_id), timeout=DEADLINE_S)
    assert [q.text for q in kept.questions] == ["Which river?"]
