"""Endpoints a request names are http(s) URLs with a host, on the allow-list when one is set
(issue 31 item 4; ADR 0126).

The evaluator runs behind a real gRPC server (its peers faked); the chunker's and the
retriever's checks are called as their servers call them. Every refusal is checked for
its status, its message naming the field, and that nothing was stored or called.
"""

from __future__ import annotations

import sqlite3

import grpc
import pytest

from chunklab.endpoints import OPEN, EndpointPolicy
from chunklab.errors import InvalidArgument
from chunklab.llm import ChatEndpoint
from chunklab.settings import Settings
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2
from services.chunker.cache import EmbeddingCache
from services.chunker.llm import LLMPool
from services.chunker.service import ChunkerService
from services.retriever.search.rerank import HttpReranker, RerankConfig, Rerankers
from tests.support.evaluator_server import FakePeers, serve_evaluator
from tests.support.fake_openai import FakeOpenAI
from tests.support.providers import HashedProvider
from tests.support.status import status_of
from tests.support.town import DEADLINE_S

E = evaluator_pb2
NOT_HTTP = "is not an http:// or https:// URL: an endpoint is called over HTTP"
HOSTILE = [
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/x",
    "http://",
    "http://user:secret@127.0.0.1/v1",
    "http://a host/v1",
]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def stored_rows(path) -> dict[str, int]:
    """Rows per table of the evaluator's database, those holding any."""
    with sqlite3.connect(path) as db:
        tables = [name for (name,) in db.execute("select name from sqlite_master where type = 'table'")]
        counts = {t: db.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables}
    return {t: n for t, n in counts.items() if n and not t.startswith("alembic_version")}


def generation(base_url: str, dry_run: bool = False) -> E.GenerateQuestionSetRequest:
    return E.GenerateQuestionSetRequest(
        document_ids=["d-1"], question_count=3, dry_run=dry_run, generator_model=E.ModelEndpoint(base_url=base_url)
    )


def test_a_generator_at_file_etc_passwd_is_refused_at_once_and_nothing_is_stored(tmp_path, fake):
    path = tmp_path / "evaluator.db"
    peers = FakePeers()
    with serve_evaluator(peers, f"sqlite:///{path}", DEADLINE_S) as stub:
        code, message = status_of(lambda: list(stub.GenerateQuestionSet(generation("file:///etc/passwd"))))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message.startswith(f"generator_model.base_url value 'file:///etc/passwd' {NOT_HTTP}")
    assert stored_rows(path) == {}
    assert peers.documents_looked_up == []  # refused before any work
    assert fake.calls == []


@pytest.mark.parametrize("base_url", HOSTILE)
def test_every_evaluator_rpc_that_takes_a_model_refuses_a_url_that_is_no_http_endpoint(tmp_path, base_url):
    path = tmp_path / "evaluator.db"
    with serve_evaluator(FakePeers(), f"sqlite:///{path}", DEADLINE_S) as stub:
        question_set = stub.CreateQuestionSet(
            E.CreateQuestionSetRequest(name="town", questions=[E.Question(text="Where is the ferry?")])
        )
        before = stored_rows(path)
        endpoint = E.ModelEndpoint(base_url=base_url, model="m")
        answer = E.AnswerRequest(
            question="Where is the ferry?",
            retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
            answer_model=endpoint,
        )
        config = E.ExperimentConfig(
            question_set_id=question_set.question_set_id,
            strategies=[E.StrategyGrid(strategy="fixed_size")],
            retrieval=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["d-1"])),
        )
        judged, answered = E.ExperimentConfig(), E.ExperimentConfig()
        judged.CopyFrom(config)
        judged.judge_model.CopyFrom(endpoint)
        answered.CopyFrom(config)
        answered.answer_model.CopyFrom(endpoint)
        calls = {
            "generator_model": lambda: list(stub.GenerateQuestionSet(generation(base_url))),
            "answer_model": lambda: list(stub.Answer(answer)),
            "judge_model": lambda: list(stub.RunExperiment(E.RunExperimentRequest(config=judged))),
            "answer_model ": lambda: list(stub.RunExperiment(E.RunExperimentRequest(config=answered))),
        }
        for field, call in calls.items():
            code, message = status_of(call)
            assert code == grpc.StatusCode.INVALID_ARGUMENT, (field, message)
            assert message.startswith(f"{field.strip()}.base_url "), message
            assert "secret" not in message  # a password in the URL is never repeated back
        assert stored_rows(path) == before  # the question set only: no generation, query or experiment


def test_the_allow_list_lets_its_hosts_and_the_configured_ones_through_and_refuses_the_rest(tmp_path, fake):
    port = fake.base_url.split(":")[2].split("/")[0]
    policy = EndpointPolicy.from_settings(
        Settings(allowed_endpoints=f"127.0.0.1:{port}, api.example.com", llm_base_url="http://llm.internal:8000/v1")
    )
    path = tmp_path / "evaluator.db"
    with serve_evaluator(FakePeers(), f"sqlite:///{path}", DEADLINE_S, policy=policy) as stub:
        code, message = status_of(lambda: list(stub.GenerateQuestionSet(generation("http://127.0.0.1:9/v1"))))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert message == (
            "generator_model.base_url names 127.0.0.1:9, which this server may not call: "
            f"CHUNKLAB_ALLOWED_ENDPOINTS allows 127.0.0.1:{port}, api.example.com (and the endpoints it is "
            "configured with); name one of those, or ask the operator to add the host"
        )
        answer = E.AnswerRequest(
            question="Where is the ferry?",
            retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
            answer_model=E.ModelEndpoint(base_url=fake.base_url, model="fake"),
        )
        events = list(stub.Answer(answer, timeout=DEADLINE_S))
    assert "".join(e.delta for e in events).startswith("Reply from fake")  # the allowed fake answered
    assert stored_rows(path) == {"queries": 1}
    for allowed in ("https://api.example.com/v1", "http://api.example.com:8080/v1", "http://llm.internal:8000/v1"):
        assert policy.check(allowed, "judge_model.base_url") == allowed
    for refused in ("http://llm.internal:8001/v1", "https://api.example.com.evil.net/v1", "http://localhost/v1"):
        with pytest.raises(InvalidArgument, match=r"^judge_model.base_url names .* may not call"):
            policy.check(refused, "judge_model.base_url")


def test_without_the_setting_any_http_host_loopback_included_is_allowed():
    policy = EndpointPolicy.from_settings(Settings(_env_file=None))
    assert policy == OPEN
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://[::1]:8080/v1", "https://x.io"):
        assert policy.check(url, "llm.base_url") == url


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("http://api.example.com", "is a URL; name its host or host:port"),
        ("api.example.com:99999", "has no valid port (1 to 65535)"),
        ("bad host", "is not a host or host:port"),
    ],
)
def test_a_malformed_allow_list_stops_the_service_at_start_naming_the_entry(value, said):
    with pytest.raises(ValueError, match="allowed_endpoints") as caught:
        Settings(allowed_endpoints=value)
    assert said in str(caught.value)


def chunker(tmp_path, policy: EndpointPolicy) -> ChunkerService:
    def no_fetch(document_id):
        raise AssertionError("a refused request fetched a document")

    return ChunkerService(
        no_fetch,
        lambda header, chunks: (0, 0),
        lambda name: HashedProvider(),
        HashedProvider.name,
        EmbeddingCache(tmp_path / "cache.sqlite3"),
        LLMPool(ChatEndpoint("http://llm.internal:8000/v1", "sk-configured", "m", 1.0, 0), 1, policy),
    )


def test_the_chunker_refuses_an_llm_base_url_before_it_fetches_the_document(tmp_path):
    service = chunker(tmp_path, EndpointPolicy.of("127.0.0.1", ["http://llm.internal:8000/v1"]))
    spec = common_pb2.StrategySpec(name="fixed_size")
    for base_url, said in [
        ("file:///etc/passwd", f"llm.base_url value 'file:///etc/passwd' {NOT_HTTP}"),
        ("http://evil.example/v1", "llm.base_url names evil.example:80, which this server may not call"),
    ]:
        llm = chunker_pb2.LLMChoice(base_url=base_url, model="m")
        for call in (
            lambda: service.check(chunker_pb2.ProcessDocumentRequest(document_id="d", strategies=[spec], llm=llm)),
            lambda: service.preview(chunker_pb2.PreviewChunksRequest(document_id="d", strategy=spec, llm=llm)),
        ):
            with pytest.raises(InvalidArgument) as caught:
                call()
            assert caught.value.message.startswith(said)
    allowed = chunker_pb2.LLMChoice(base_url="http://127.0.0.1:11434/v1", model="m")
    assert service._llm.resolve(allowed).base_url == "http://127.0.0.1:11434/v1"
    assert service._llm.resolve(allowed).api_key == ""  # the configured key stays with its own URL


def test_the_retriever_refuses_a_rerank_url_off_the_allow_list_and_keeps_its_configured_one():
    config = RerankConfig(
        url="http://tei.internal:8080/rerank", policy=EndpointPolicy.of("127.0.0.1", ["http://tei.internal:8080"])
    )
    rerankers = Rerankers(config)
    with pytest.raises(InvalidArgument) as caught:
        rerankers.get(common_pb2.RerankOptions(kind=common_pb2.RERANKER_KIND_TEI, base_url="http://169.254.169.254/"))
    assert caught.value.message.startswith("rerank.base_url names 169.254.169.254:80, which this server may not call")
    configured = rerankers.get(common_pb2.RerankOptions(kind=common_pb2.RERANKER_KIND_TEI))
    assert isinstance(configured, HttpReranker)
    loopback = rerankers.get(
        common_pb2.RerankOptions(kind=common_pb2.RERANKER_KIND_HTTP, base_url="http://127.0.0.1:9/rerank")
    )
    assert isinstance(loopback, HttpReranker)
