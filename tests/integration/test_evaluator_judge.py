"""The LLM judge and streamed answers against a real local OpenAI-compatible
server (tests/support/fake_openai.py): good, malformed, failing, rate-limited
and slow replies. A reply that cannot be used is retried with backoff, then
recorded as not measured: never 0, never NaN."""

from __future__ import annotations

import json
import math

import pytest

from chunklab.llm import ChatClient, ChatEndpoint
from chunklab.v1 import common_pb2
from services.evaluator.judging import answers, judge
from tests.support.fake_openai import FakeOpenAI

ITEM = judge.JudgeInput(
    question="When was the bridge opened?",
    context="[1] bridges.md\nThe bridge opened in 1932 after four years of work.",
    answer="It opened in 1932.",
    expected="1932",
)


def is_hallucination_prompt(messages) -> bool:
    return '"hallucination"' in messages[-1]["content"]


def good_responder(messages, model) -> str:
    if is_hallucination_prompt(messages):
        return json.dumps({"hallucination": "no", "reason": "the date is in the context"})
    return json.dumps({"score": 8, "reason": "close enough"})


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        server.responder = good_responder
        yield server


def make_judge(fake: FakeOpenAI, timeout_s: float = 10.0, attempts: int = 3, sleeps: list | None = None) -> judge.Judge:
    endpoint = ChatEndpoint(fake.base_url, "test-key", "judge-model", timeout_s=timeout_s, max_retries=0)
    record = sleeps.append if sleeps is not None else (lambda s: None)
    return judge.Judge(ChatClient(endpoint), attempts=attempts, backoff_s=0.05, sleep=record)


def values(outcome: judge.JudgeOutcome) -> dict[str, tuple[bool, float]]:
    return {m: (getattr(outcome.scores, m).measured, getattr(outcome.scores, m).value) for m in judge.MEASURES}


def test_good_replies_give_four_measured_scores_with_reasons_and_the_prompt_version(fake):
    outcome = make_judge(fake).score(ITEM)
    assert values(outcome) == {
        "context_relevance": (True, 8.0),
        "answer_similarity": (True, 8.0),
        "faithfulness": (True, 8.0),
        "hallucination": (True, 0.0),
    }
    assert outcome.scores.faithfulness.reason == "close enough"
    assert outcome.scores.prompt_version == judge.prompt_version()
    assert outcome.scores.judge_model == "judge-model"
    assert outcome.calls == 4 == len(fake.calls)
    assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0


def test_a_malformed_reply_is_retried_and_then_used(fake):
    replies = iter(["Score: 8/10, pretty good", '{"score": 8}', '{"score": 9, "reason": "on topic"}'])

    def responder(messages, model):
        if "relevant" in messages[-1]["content"]:
            return next(replies)
        return good_responder(messages, model)

    fake.responder = responder
    sleeps: list[float] = []
    outcome = make_judge(fake, sleeps=sleeps).score(ITEM)
    assert values(outcome)["context_relevance"] == (True, 9.0)
    assert outcome.calls == 3 + 3  # three tries for relevance, one for each other measure
    assert sleeps == [0.05, 0.1]  # backoff doubles


def test_broken_json_from_the_server_is_retried(fake):
    fake.script = ["garbage"]
    outcome = make_judge(fake).score(ITEM)
    assert all(measured for measured, _ in values(outcome).values())
    assert [c["behaviour"] for c in fake.calls][:2] == ["garbage", "good"]


def test_replies_that_stay_unusable_are_not_measured_never_zero_or_nan(fake):
    fake.responder = lambda messages, model: '{"score": 42, "reason": "very"}'
    outcome = make_judge(fake, attempts=2).score(ITEM)
    for measure in judge.MEASURES:
        score = getattr(outcome.scores, measure)
        assert not score.measured
        assert not math.isnan(score.value)
        assert "not measured after 2 attempts" in score.reason
    assert "between 1 and 10" in outcome.scores.faithfulness.reason
    assert outcome.calls == 2 * 4


def test_a_failing_server_is_retried_then_recorded_as_not_measured(fake):
    fake.behaviour = "error"
    outcome = make_judge(fake).score(ITEM)
    assert not any(measured for measured, _ in values(outcome).values())
    assert "HTTP 500" in outcome.scores.context_relevance.reason
    assert len(fake.calls) == 3 * 4  # our own retries only: the client does not retry on top


def test_rate_limits_and_slow_replies_are_retried(fake):
    fake.script = ["rate_limit", "slow"]
    fake.delay_s = 2.0
    outcome = make_judge(fake, timeout_s=0.5).score(ITEM)
    assert values(outcome)["context_relevance"] == (True, 8.0)
    assert [c["behaviour"] for c in fake.calls][:3] == ["rate_limit", "slow", "good"]


def test_a_slow_reply_within_the_timeout_is_used(fake):
    fake.behaviour = "slow"
    fake.delay_s = 0.2
    outcome = make_judge(fake, timeout_s=10).score(ITEM)
    assert all(measured for measured, _ in values(outcome).values())


def test_without_an_expected_answer_similarity_is_not_measured_and_not_asked(fake):
    item = judge.JudgeInput(ITEM.question, ITEM.context, ITEM.answer, expected="")
    outcome = make_judge(fake).score(item)
    assert not outcome.scores.answer_similarity.measured
    assert "no expected answer" in outcome.scores.answer_similarity.reason
    assert outcome.calls == 3


def test_answers_stream_piece_by_piece_then_the_whole(fake):
    fake.responder = lambda messages, model: "The bridge opened in 1932."
    client = ChatClient(ChatEndpoint(fake.base_url, "", "answer-model", max_retries=0))
    retrieved = [
        common_pb2.RetrievedChunk(chunk=common_pb2.Chunk(document_name="bridges.md", content="It opened in 1932."))
    ]
    pieces = list(answers.stream_llm_answer(client, "When?", retrieved))
    *deltas, final = pieces
    assert len(deltas) > 1 and all(isinstance(d, str) for d in deltas)
    assert isinstance(final, answers.Answer) and "".join(deltas) == final.text == "The bridge opened in 1932."
    assert not final.extractive and final.model == "answer-model"
    prompt = fake.calls[0]["body"]["messages"][-1]["content"]
    assert "bridges.md" in prompt and "It opened in 1932." in prompt and "When?" in prompt
