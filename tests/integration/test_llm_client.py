"""The OpenAI-compatible chat client against a real local HTTP server."""

from __future__ import annotations

import pytest
from support.fake_openai import FakeOpenAI

from chunklab.llm import ChatClient, ChatEndpoint, ChatResult, LLMError


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


def client(server, timeout_s: float = 5.0, retries: int = 0) -> ChatClient:
    return ChatClient(ChatEndpoint(server.base_url, "secret", "fake-model", timeout_s, retries))


def test_a_good_reply_comes_back_with_its_token_counts(server):
    server.responder = lambda messages, model: "Paris is the capital."
    result = client(server).complete([{"role": "user", "content": "What is the capital of France?"}])
    assert result.text == "Paris is the capital."
    assert (result.prompt_tokens, result.completion_tokens) == (6, 4)


def test_a_streamed_reply_arrives_piece_by_piece_then_whole(server):
    server.responder = lambda messages, model: "one two three"
    events = list(client(server).stream([{"role": "user", "content": "count"}]))
    assert events[:-1] == ["one", " two", " three"]
    assert isinstance(events[-1], ChatResult) and events[-1].text == "one two three"
    assert events[-1].completion_tokens == 3


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [("error", "HTTP 500"), ("rate_limit", "rate limited"), ("garbage", "unusable reply"), ("empty", "unusable reply")],
)
def test_failures_become_one_readable_error(server, behaviour, message):
    server.behaviour = behaviour
    with pytest.raises(LLMError, match=message):
        client(server).complete([{"role": "user", "content": "hi"}])


def test_a_slow_endpoint_times_out(server):
    server.behaviour, server.delay_s = "slow", 3
    with pytest.raises(LLMError, match="did not answer within 0.5s"):
        client(server, timeout_s=0.5).complete([{"role": "user", "content": "hi"}])


def test_transient_failures_are_retried(server):
    server.script = ["error", "rate_limit"]
    server.responder = lambda messages, model: "fine"
    assert client(server, retries=2).complete([{"role": "user", "content": "hi"}]).text == "fine"
    assert [c["behaviour"] for c in server.calls] == ["error", "rate_limit", "good"]


def test_no_endpoint_is_a_clear_error():
    with pytest.raises(LLMError, match="CHUNKLAB_LLM_BASE_URL"):
        ChatClient(ChatEndpoint("", "", ""))


def test_the_providers_own_text_goes_to_the_log_not_into_the_error(server, caplog):
    """ADR 0079: the error says what happened in our words (by class and status code);
    the provider's body stays in the log of the service that called."""
    server.behaviour = "error"
    with caplog.at_level("WARNING", logger="chunklab.llm"), pytest.raises(LLMError) as caught:
        client(server).complete([{"role": "user", "content": "hi"}])
    assert str(caught.value) == (
        f"the LLM (fake-model at {server.base_url}) answered HTTP 500 (an error on its side); "
        "its reply is in the service log"
    )
    assert "the model crashed" in caplog.text


def test_an_endpoint_nobody_listens_on_is_unreachable_in_our_words(caplog):
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    endpoint = ChatEndpoint(url, "secret", "fake-model", 5.0, 0)
    with caplog.at_level("WARNING", logger="chunklab.llm"), pytest.raises(LLMError) as caught:
        ChatClient(endpoint).complete([{"role": "user", "content": "hi"}])
    assert str(caught.value) == (
        f"the LLM (fake-model at {url}) is unreachable: no connection could be made or it "
        "was cut (after 0 retries); check the address and that it is running"
    )
    assert "APIConnectionError: Connection error" in caplog.text
