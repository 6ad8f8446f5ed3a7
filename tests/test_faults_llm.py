"""An LLM endpoint that fails: 429, 500, too slow, garbage, a cut stream
(issue 14, item 6; docs/reliability.md).

The evaluator runs in this process behind a real gRPC server (its peers
faked: one retrieved chunk, documents indexed already); its models are the
fake OpenAI server over real HTTP. Answers retry what the openai client
retries (429, 5xx, timeouts: CHUNKLAB_LLM_MAX_RETRIES, 1 here) and then fail
with a sentence naming the endpoint; judges retry any failure or unusable
reply themselves and then record "not measured" with the last problem. An
experiment counts every question, failed or not, and its stream ends."""

from __future__ import annotations

import json

import grpc
import pytest

from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from services.evaluator.judging import judge
from tests.support.evaluator_server import serve_evaluator
from tests.support.fake_openai import FakeOpenAI
from tests.test_cancellation import FakePeers

ANSWER = "Chunking cuts documents into pieces that fit the model"
CUT = "Chunking cuts documents into"  # what a truncated stream sends: the first half of the words
UNFINISHED = ("without saying it was finished (the connection was cut, or the endpoint does not stream chat "
              "completions)")
TIMEOUT_S = 1.0
DEADLINE_S = 60.0  # every call the test makes ends before this, or the test fails


class IndexedPeers(FakePeers):
    """FakePeers whose documents are indexed with every configuration already."""

    def indexed_set(self, model, document_id, strategy, config_id):
        return retriever_pb2.IndexedSet(embedding_model=model, document_id=document_id, strategy=strategy,
                                        config_id=config_id, points=1)


@pytest.fixture
def models():
    with FakeOpenAI() as answers, FakeOpenAI() as judges:
        answers.responder = lambda messages, model: ANSWER
        answers.delay_s = 5 * TIMEOUT_S
        yield answers, judges


@pytest.fixture
def evaluator(tmp_path):
    with serve_evaluator(IndexedPeers(), f"sqlite:///{tmp_path / 'evaluator.sqlite3'}", TIMEOUT_S, max_retries=1,
                         judge_attempts=3, judge_backoff_s=0.01) as stub:
        yield stub


def answer(stub, fake: FakeOpenAI) -> tuple[list[evaluator_pb2.AnswerEvent], grpc.RpcError | None]:
    events: list[evaluator_pb2.AnswerEvent] = []
    request = evaluator_pb2.AnswerRequest(
        question="What is chunking?", retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake"))
    try:
        for event in stub.Answer(request, timeout=DEADLINE_S):
            events.append(event)
    except grpc.RpcError as exc:
        return events, exc
    return events, None


def test_an_answer_retries_a_rate_limit_and_a_crash_once_then_succeeds(evaluator, models):
    fake, _ = models
    for failure in ("rate_limit", "error"):
        fake.calls.clear()
        fake.script = [failure, "good"]
        events, error = answer(evaluator, fake)
        assert error is None and events[-1].result.answer == ANSWER
        assert [c["behaviour"] for c in fake.calls] == [failure, "good"]


@pytest.mark.parametrize("behaviour, calls, problem", [
    ("rate_limit", 2, "refused: rate limited after 1 retries"),
    ("error", 2, "answered HTTP 500: the model crashed"),
    ("slow", 2, f"did not answer within {TIMEOUT_S:g}s"),
    ("truncated", 1, f"stopped before the end of its reply: the stream ended after {len(CUT)} characters {UNFINISHED}"),
    ("garbage", 1, f"stopped before the end of its reply: the stream ended after 0 characters {UNFINISHED}"),
])
def test_an_answer_the_model_cannot_give_fails_unavailable_in_a_sentence_and_is_not_stored(
        evaluator, models, behaviour, calls, problem):
    fake, _ = models
    fake.behaviour = behaviour
    events, error = answer(evaluator, fake)
    assert error is not None and error.code() == grpc.StatusCode.UNAVAILABLE
    assert error.details() == f"the answer model failed: the LLM (fake at {fake.base_url}) {problem}"
    assert len(fake.calls) == calls
    assert "".join(e.delta for e in events) == (CUT if behaviour == "truncated" else "")
    (context,) = [e.context for e in events if e.HasField("context")]
    assert not any(e.HasField("result") for e in events)
    with pytest.raises(grpc.RpcError) as unknown:  # an answer nobody got is not a query
        evaluator.SubmitFeedback(evaluator_pb2.SubmitFeedbackRequest(query_id=context.query_id, thumbs_up=True),
                                 timeout=DEADLINE_S)
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


def verdicts(messages: list[dict], model: str) -> str:
    """Context relevance gets prose, not JSON; the other judges a valid verdict."""
    prompt = messages[-1]["content"]
    if prompt.startswith("Rate how relevant"):
        return "I would say 8 out of 10."
    if '"hallucination"' in prompt:
        return json.dumps({"hallucination": "no", "reason": "every claim is in the context"})
    return json.dumps({"score": 9, "reason": "supported by the context"})


def test_an_experiment_counts_every_question_and_says_why_each_failed(evaluator, models):
    answers, judges = models
    questions = ["What is chunking?", "Why chunk?", "How big is a chunk?", "Who chunks?"]
    answers.script = ["rate_limit", "good",  # question 1: answered on the retry
                      "error", "error",  # question 2: the model crashes twice
                      "truncated",  # question 3: the stream is cut
                      "slow", "slow"]  # question 4: no reply within the timeout, twice
    judges.responder = verdicts
    judges.script = ["rate_limit", "garbage"]  # question 1's context relevance: a 429, then a non-JSON body
    question_set = evaluator.CreateQuestionSet(evaluator_pb2.CreateQuestionSetRequest(
        name="chunking", questions=[evaluator_pb2.Question(text=q) for q in questions]), timeout=DEADLINE_S)
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id, strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=answers.base_url, model="fake"),
        judge_model=evaluator_pb2.ModelEndpoint(base_url=judges.base_url, model="judge"))
    events = list(evaluator.RunExperiment(evaluator_pb2.RunExperimentRequest(config=config), timeout=DEADLINE_S))
    done = events[-1].experiment
    assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
    assert done.questions_done == done.questions_total == 4
    results = evaluator.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=done.experiment_id),
                                      timeout=DEADLINE_S).results
    where = f"the answer model failed: the LLM (fake at {answers.base_url})"
    assert [(r.question, r.error) for r in results] == [
        ("What is chunking?", ""),
        ("Why chunk?", f"{where} answered HTTP 500: the model crashed"),
        ("How big is a chunk?",
         f"{where} stopped before the end of its reply: the stream ended after {len(CUT)} characters {UNFINISHED}"),
        ("Who chunks?", f"{where} did not answer within {TIMEOUT_S:g}s"),
    ]
    assert results[0].answer == ANSWER and [r.answer for r in results[1:]] == ["", "", ""]
    scores = results[0].judge
    assert not scores.context_relevance.measured
    assert scores.context_relevance.reason == (
        "not measured after 3 attempts: unusable judge reply: not JSON (Expecting value at character 0)")
    assert (scores.faithfulness.measured, scores.faithfulness.value) == (True, 9.0)
    assert (scores.hallucination.measured, scores.hallucination.value) == (True, 0.0)
    assert [c["behaviour"] for c in judges.calls[:3]] == ["rate_limit", "garbage", "good"]
    for failed in results[1:]:
        assert {getattr(failed.judge, m).reason for m in judge.MEASURES} == {"no answer to judge"}
        assert failed.usage.llm_calls == 1
    (run,) = done.runs
    assert run.questions_done == 4 and run.mean_judge.faithfulness.reason == "1 of 4 questions measured"
