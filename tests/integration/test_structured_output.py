"""response_format against endpoints that take it, refuse it (400 or FastAPI's 422) or are
switched off, through the real HTTP path (tests/support/fake_openai.py); and the reply
shapes of real servers: streams without usage, replies cut at max_tokens."""

from __future__ import annotations

import json

import pytest

from chunklab.llm import ChatClient, ChatEndpoint, LLMError
from chunklab.llm_json import REFUSALS, complete_json
from services.evaluator.judging import judge
from tests.support.fake_openai import FakeOpenAI

SCHEMA = judge.schema("faithfulness")
MESSAGES = [{"role": "user", "content": "Rate it."}]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        server.responder = lambda messages, model: json.dumps({"score": 8, "reason": "supported"})
        yield server


def client(fake: FakeOpenAI, structured_output: str = "auto", model: str = "m") -> ChatClient:
    return ChatClient(ChatEndpoint(fake.base_url, "", model, 10.0, 0, structured_output))


def kinds(fake: FakeOpenAI) -> list[str]:
    out = []
    for call in fake.calls:
        fmt = call["body"].get("response_format")
        out.append("none" if fmt is None else fmt["type"] + ("+schema" if "schema" in fmt else ""))
    return out


def test_an_endpoint_that_takes_the_schema_gets_it_first(fake):
    reply = complete_json(client(fake), MESSAGES, name="judge", schema=SCHEMA, max_tokens=50)
    assert reply.form == "json_schema" and kinds(fake) == ["json_schema"]
    assert fake.calls[0]["body"]["response_format"]["json_schema"]["schema"] == SCHEMA
    assert judge.parse_reply("faithfulness", reply.result.text) == (8.0, "supported")


def test_a_refused_form_moves_to_the_next_and_is_remembered_for_that_endpoint(fake):
    fake.script = ["unprocessable"]  # llama-cpp-python's answer to json_schema
    first = complete_json(client(fake, model="a"), MESSAGES, name="judge", schema=SCHEMA)
    second = complete_json(client(fake, model="a"), MESSAGES, name="judge", schema=SCHEMA)
    other_model = complete_json(client(fake, model="b"), MESSAGES, name="judge", schema=SCHEMA)
    assert (first.form, second.form, other_model.form) == ("json_object+schema", "json_object+schema", "json_schema")
    assert kinds(fake) == ["json_schema", "json_object+schema", "json_object+schema", "json_schema"]


def test_a_500_that_names_response_format_is_a_refusal_and_any_other_500_an_error(fake):
    fake.script = ["format_error"]  # llama-cpp-python's server, asked for json_schema
    assert complete_json(client(fake, model="d"), MESSAGES, name="judge", schema=SCHEMA).form == "json_object+schema"
    fake.script = ["error"]
    with pytest.raises(LLMError, match="HTTP 500"):
        complete_json(client(fake, model="e"), MESSAGES, name="judge", schema=SCHEMA)
    assert kinds(fake) == ["json_schema", "json_object+schema", "json_schema"]


def test_a_request_refused_in_every_form_is_an_error_and_nothing_is_remembered(fake):
    fake.behaviour = "bad_request"
    with pytest.raises(LLMError, match="HTTP 400"):
        complete_json(client(fake, model="c"), MESSAGES, name="judge", schema=SCHEMA)
    assert kinds(fake) == ["json_schema", "json_object+schema", "json_object", "none"]
    assert REFUSALS.of(client(fake, model="c").endpoint) == set()


def test_switched_off_no_response_format_is_sent(fake):
    reply = complete_json(client(fake, "off"), MESSAGES, name="judge", schema=SCHEMA)
    assert reply.form == "none" and kinds(fake) == ["none"]


def test_a_judge_reply_cut_at_max_tokens_is_not_measured_with_that_reason(fake):
    fake.responder = lambda messages, model: '{"score": 8, "reason": "the answer repeats'
    fake.finish_reason = "length"
    item = judge.JudgeInput("q?", "context", "answer", "")
    outcome = judge.Judge(client(fake), attempts=2, backoff_s=0).score(item)
    score = outcome.scores.faithfulness
    assert not score.measured and score.value == 0.0
    assert score.reason == (
        "not measured after 2 attempts: unusable judge reply: the reply was cut at its limit of "
        f"{judge.MAX_TOKENS} tokens before its JSON ended"
    )


def test_a_stream_without_usage_is_counted_by_our_tokenizer(fake):
    fake.stream_usage = False
    fake.responder = lambda messages, model: "The bridge opened in 1932."
    pieces = list(client(fake).stream([{"role": "user", "content": "When did the bridge open?"}]))
    result = pieces[-1]
    assert "".join(pieces[:-1]) == result.text == "The bridge opened in 1932."
    assert result.usage_estimated and result.prompt_tokens > 0 and result.completion_tokens > 0
    assert result.finish_reason == "stop"
