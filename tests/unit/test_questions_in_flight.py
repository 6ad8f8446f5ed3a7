"""A retrieval-only run asks its next question while the last one's result is scored and
saved (ADR 0143): results still come in the questions' order, and a stop asks nothing more."""

from __future__ import annotations

import threading

import pytest

from chunklab.v1 import evaluator_pb2
from services.evaluator.experiments.ask import Interrupted
from services.evaluator.experiments.run import in_order
from tests.support.waiting import WAIT_S

QUESTIONS = [(n, evaluator_pb2.Question(text=f"question {n}")) for n in range(5)]


def test_two_questions_are_asked_at_once_and_answered_in_their_order():
    second_asked = threading.Event()

    def ask(question):
        if question.text == "question 1":
            second_asked.set()
        if question.text == "question 0":  # the first answers only once the second is being asked
            assert second_asked.wait(WAIT_S)
        return evaluator_pb2.QuestionResult(question=question.text)

    results = list(in_order(QUESTIONS, ask, lambda: None, 2))
    assert [(p, q.text, r.question) for p, q, r in results] == [(n, f"question {n}", f"question {n}") for n in range(5)]


def test_a_stop_asks_no_further_question_and_drops_the_one_in_flight():
    asked: list[str] = []
    stopped = threading.Event()

    def ask(question):
        asked.append(question.text)
        return evaluator_pb2.QuestionResult(question=question.text)

    def check_stop():
        if stopped.is_set():
            raise Interrupted(cancelled=True)

    taken = []
    with pytest.raises(Interrupted):
        for _, _, result in in_order(QUESTIONS, ask, check_stop, 2):
            taken.append(result.question)
            stopped.set()  # cancelled while the first result is saved
    assert taken == ["question 0"]
    # At most the one already in flight (a queued one is called off); nothing after the stop.
    assert asked in (["question 0"], ["question 0", "question 1"])


def test_one_at_a_time_when_answers_cost_money():
    asked: list[str] = []

    def ask(question):
        asked.append(question.text)
        return evaluator_pb2.QuestionResult(question=question.text)

    for position, _, _ in in_order(QUESTIONS, ask, lambda: None, 1):
        assert len(asked) == position + 1  # the next question waits for this one's result to be taken
