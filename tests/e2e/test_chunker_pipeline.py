"""The chunker's pipeline: the embedding cache, LLM plumbing, progress,
failure isolation and atomic replacement.

The first half runs ChunkerService in this process with a cheap hashed
embedding model and a real local OpenAI-compatible server; the second half
goes through gRPC with the four services as processes, their LLM pointed
at that server.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fake_openai import FakeOpenAI
from support.providers import HashedProvider

from chunklab import ids
from chunklab.errors import FailedPrecondition, NotFound
from chunklab.llm import ChatEndpoint
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.text import tokens
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, retriever_pb2
from chunklab_app.stack import Stack
from services.chunker import run as run_module
from services.chunker import service as service_module
from services.chunker.cache import EmbeddingCache, content_key
from services.chunker.llm import NO_LLM, LLMPool
from services.chunker.service import ChunkerService
from services.chunker.strategies import REGISTRY
from services.chunker.token_map import TokenMap
from services.ingest.readers.markdown import parse
from services.retriever.checks import check_index_set
from tests.support.chunking import SPEC_NAMES

FIXTURES = Path(__file__).parents[1] / "fixtures"
STARTED, RUNNING = chunker_pb2.STRATEGY_PHASE_STARTED, chunker_pb2.STRATEGY_PHASE_RUNNING
COMPLETED, FAILED = chunker_pb2.STRATEGY_PHASE_COMPLETED, chunker_pb2.STRATEGY_PHASE_FAILED


# -- in process ---------------------------------------------------------------


def markdown_document(document_id: str = "doc-1", text: str | None = None) -> documents_pb2.Document:
    text = text if text is not None else (FIXTURES / "regulation.md").read_text()
    return documents_pb2.Document(
        document_id=document_id,
        name=f"{document_id}.md",
        text=text,
        language="en",
        collection="default",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        tree=parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN),
    )


class Harness:
    """A ChunkerService with an in-memory ingest and index."""

    def __init__(self, cache_path: Path, llm_base_url: str = "", concurrency: int = 4) -> None:
        self.documents = {"doc-1": markdown_document()}
        self.indexed: dict[tuple[str, str], tuple[retriever_pb2.IndexHeader, list]] = {}
        self.provider = HashedProvider()
        self.pool = LLMPool(ChatEndpoint(llm_base_url, "sk-configured", "fake-llm", 2.0, 0), concurrency)
        self.cache = EmbeddingCache(cache_path)
        self.service = ChunkerService(
            self._fetch, self._index, lambda name: self.provider, "hashed-64", self.cache, self.pool
        )

    def _fetch(self, document_id: str) -> documents_pb2.Document:
        if document_id not in self.documents:
            raise NotFound(f"no document {document_id}")
        return self.documents[document_id]

    def _index(self, header, chunks) -> tuple[int, int]:
        self.indexed[(header.document_id, header.strategy)] = (header, list(chunks))
        return len(chunks), 0

    def process(self, *strategies: str | common_pb2.StrategySpec, document_id: str = "doc-1", llm=None, cancelled=None):
        specs = [common_pb2.StrategySpec(name=s) if isinstance(s, str) else s for s in strategies]
        request = chunker_pb2.ProcessDocumentRequest(document_id=document_id, strategies=specs, llm=llm)
        return list(self.service.process(request, cancelled))

    def preview(self, name: str, **knobs):
        spec = common_pb2.StrategySpec(
            name=name, knobs={k: common_pb2.KnobValue(int_value=v) for k, v in knobs.items()}
        )
        return self.service.preview(chunker_pb2.PreviewChunksRequest(document_id="doc-1", strategy=spec))


@pytest.fixture(scope="module")
def llm():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def harness(tmp_path, llm):
    llm.behaviour, llm.script = "good", []
    llm.responder = lambda messages, model: "This chunk is part of the regulation's rules on leave."
    yield Harness(tmp_path / "cache.sqlite3", llm.base_url)


def result_of(events) -> chunker_pb2.ProcessDocumentResult:
    assert events[-1].HasField("result") and all(e.HasField("progress") for e in events[:-1])
    return events[-1].result


def test_every_strategy_previews_and_processes_with_the_right_vectors(harness):
    names = REGISTRY.names()
    assert names == SPEC_NAMES  # every strategy, the new ones included
    for name in names:
        preview = harness.preview(name)
        assert preview.chunks, name
        text = harness.documents["doc-1"].text
        assert all(text[c.start_char : c.end_char] == c.content for c in preview.chunks), name
    result = result_of(harness.process(*names))
    assert [o.strategy for o in result.strategies_completed] == names, result.strategies_failed
    assert result.embedding_model == "hashed-64" and result.llm.startswith("fake-llm at http://127.0.0.1")
    for name in names:
        header, indexed = harness.indexed[("doc-1", name)]
        assert header.embedding_model == "hashed-64" and header.dimension == 64
        assert header.chunk_count == len(indexed), name
        check_index_set(header, indexed)  # a set the retriever takes whole (ADR 0123)
        for item in indexed:
            chunk = item.chunk
            assert chunk.embedding_model == "hashed-64"
            if ids.role_name(chunk.role) == "parent":
                assert len(item.vector) == 0  # stored for lookup by id, never searched
            else:
                embedded = chunk.enriched_content if chunk.HasField("enriched_content") else chunk.content
                assert np.allclose(item.vector, harness.provider.embed_query(embedded), atol=1e-6), name
    enriched = [i.chunk for i in harness.indexed[("doc-1", "contextual_retrieval")][1]]
    assert all(c.enriched_content.startswith("This chunk is part of") for c in enriched)


def test_an_unchanged_document_is_never_embedded_twice(harness, tmp_path):
    names = ["fixed_size", "semantic", "sentence_window", "parent_child"]
    first = result_of(harness.process(*names))
    embedded_once = harness.provider.texts_embedded
    assert embedded_once > 0 and all(
        o.embeddings_cached == 0 for o in first.strategies_completed if o.strategy == "fixed_size"
    )
    again = result_of(harness.process(*names))
    assert harness.provider.texts_embedded == embedded_once  # not one text, not even the sentences semantic compares
    for outcome in again.strategies_completed:
        searchable = [
            i for i in harness.indexed[("doc-1", outcome.strategy)][1] if ids.role_name(i.chunk.role) != "parent"
        ]
        assert outcome.embeddings_cached == len(searchable) > 0
        assert outcome.usage.embedding_tokens == 0
    # A new process finds them on disk.
    harness.cache.close()
    fresh = Harness(tmp_path / "cache.sqlite3")
    fresh.provider = harness.provider
    result_of(fresh.process(*names))
    assert harness.provider.texts_embedded == embedded_once


class ModelClock:
    """A clock that moves only while the model embeds: 10 s a call, so that each phase's
    seconds say exactly where the model was called."""

    def __init__(self, provider) -> None:
        self.now, inner = 0.0, provider.embed_documents

        def embed_documents(texts):
            self.now += 10.0
            return inner(texts)

        provider.embed_documents = embed_documents

    def __call__(self) -> float:
        return self.now


def test_phase_timings_count_embedding_while_chunking_as_embed(harness, monkeypatch):
    clock = ModelClock(harness.provider)
    monkeypatch.setattr(service_module.time, "perf_counter", clock)
    monkeypatch.setattr(run_module.time, "perf_counter", clock)
    outcomes = {o.strategy: o for o in result_of(harness.process("fixed_size", "semantic")).strategies_completed}
    phases = {
        name: (o.phases.chunk_seconds, o.phases.embed_seconds, o.phases.index_seconds, o.seconds)
        for name, o in outcomes.items()
    }
    # fixed_size: one call for its chunks; semantic: one for its sentences while chunking, one for its chunks.
    assert phases == {"fixed_size": (0.0, 10.0, 0.0, 10.0), "semantic": (0.0, 20.0, 0.0, 20.0)}


def test_usage_counts_llm_calls_and_tokens(harness):
    outcome = result_of(harness.process("contextual_retrieval")).strategies_completed[0]
    assert outcome.usage.llm_calls == outcome.chunk_count > 0
    assert outcome.usage.prompt_tokens > outcome.usage.completion_tokens > 0
    assert outcome.usage.embedding_tokens > 0


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("error", "HTTP 500"),
        ("slow", "did not answer within 2s"),
        ("garbage", "unusable reply"),
        ("empty", "unusable reply"),
    ],
)
def test_a_failing_llm_fails_its_strategy_alone_and_stores_nothing(harness, llm, behaviour, reason):
    llm.behaviour, llm.delay_s = behaviour, 4
    events = harness.process("contextual_retrieval", "fixed_size")
    result = result_of(events)
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size"]
    (failure,) = result.strategies_failed
    assert failure.strategy == "contextual_retrieval" and reason in failure.reason, failure.reason
    assert ("doc-1", "contextual_retrieval") not in harness.indexed
    failed = [e.progress for e in events[:-1] if e.progress.phase == FAILED]
    assert failed[0].strategy == "contextual_retrieval" and reason in failed[0].error


def test_without_an_llm_the_contextual_strategies_say_so(tmp_path):
    harness = Harness(tmp_path / "cache.sqlite3", llm_base_url="")
    result = result_of(harness.process("fixed_size", "contextual_retrieval", "contextual_structure"))
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size"]
    assert {f.strategy: f.reason for f in result.strategies_failed} == {
        "contextual_retrieval": NO_LLM,
        "contextual_structure": NO_LLM,
    }
    assert set(harness.indexed) == {("doc-1", "fixed_size")}
    with pytest.raises(FailedPrecondition, match="contextual_retrieval needs an LLM.*CHUNKLAB_LLM_BASE_URL"):
        harness.preview("contextual_retrieval")


class _BrokenIndex(dict):
    def __setitem__(self, key, value):
        raise RuntimeError("disk quota of /srv/secret-volume exceeded")


def test_an_unexpected_failure_tells_the_client_an_incident_and_the_log_the_exception(harness, caplog):
    """ADR 0050: the exception's text stays in the chunker's log under an
    incident id; the strategy's reason says what failed and what to do."""
    harness.indexed = _BrokenIndex()
    events = harness.process("fixed_size")
    (failure,) = result_of(events).strategies_failed
    assert failure.strategy == "fixed_size"
    assert re.fullmatch(
        r"fixed_size failed on document doc-1 with an internal error \(incident ([0-9a-f]{12})\); "
        r"the chunker log has the details\. Try again, and report the incident if it fails again",
        failure.reason,
    ), failure.reason
    failed = [e.progress for e in events[:-1] if e.progress.phase == FAILED]
    assert "secret-volume" not in failure.reason and "secret-volume" not in failed[0].error
    incident = re.search(r"incident ([0-9a-f]{12})", failure.reason).group(1)
    (logged,) = [r for r in caplog.records if incident in r.getMessage()]
    assert logged.exc_info and "secret-volume" in str(logged.exc_info[1])


def test_progress_goes_forward_strategy_by_strategy(harness):
    events = harness.process("fixed_size", spec("contextual_retrieval", chunk_size=40, chunk_overlap=0), "semantic")
    progress = [e.progress for e in events[:-1]]
    order = []
    for event in progress:
        if not order or order[-1][0] != event.strategy:
            order.append((event.strategy, []))
        order[-1][1].append(event)
    assert [name for name, _ in order] == ["fixed_size", "contextual_retrieval", "semantic"]
    for _name, steps in order:
        assert steps[0].phase == STARTED and steps[-1].phase == COMPLETED
        assert all(s.phase == RUNNING for s in steps[1:-1])
        fractions = [s.fraction_done for s in steps]
        assert fractions == sorted(fractions) and fractions[-1] == 1.0
        assert steps[-1].chunk_count > 0 and steps[-1].seconds > 0
    llm_steps = [s.message for s in order[1][1] if "the LLM answered" in s.message]
    assert llm_steps, "the LLM phase reports its progress"


def test_llm_calls_are_bounded_by_the_configured_concurrency(tmp_path, llm):
    in_flight, peak, lock = [0], [0], threading.Lock()

    def responder(messages, model):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return "A context."

    llm.behaviour, llm.responder = "good", responder
    harness = Harness(tmp_path / "cache.sqlite3", llm.base_url, concurrency=2)
    outcome = result_of(
        harness.process(spec("contextual_retrieval", chunk_size=40, chunk_overlap=0))
    ).strategies_completed[0]
    assert outcome.chunk_count > 4 and peak[0] == 2


def test_a_cancelled_run_stops_and_indexes_nothing(tmp_path, llm):
    cancelled = threading.Event()

    def responder(messages, model):
        cancelled.set()  # the caller goes away while the LLM works
        return "A context."

    llm.behaviour, llm.responder = "good", responder
    harness = Harness(tmp_path / "cache.sqlite3", llm.base_url)
    events = harness.process(
        spec("contextual_retrieval", chunk_size=40, chunk_overlap=0), "fixed_size", cancelled=cancelled
    )
    assert not any(e.HasField("result") for e in events)
    assert harness.indexed == {}


def test_a_request_may_choose_its_llm_but_the_configured_key_stays_home():
    pool = LLMPool(ChatEndpoint("http://configured/v1", "sk-configured", "gpt-4o-mini"), 2)
    assert pool.resolve(None).api_key == "sk-configured"
    same = pool.resolve(chunker_pb2.LLMChoice(model="llama3"))
    assert (same.base_url, same.api_key, same.model) == ("http://configured/v1", "sk-configured", "llama3")
    other = pool.resolve(chunker_pb2.LLMChoice(base_url="http://elsewhere/v1"))
    assert (other.base_url, other.api_key, other.model) == ("http://elsewhere/v1", "", "gpt-4o-mini")
    own = pool.resolve(chunker_pb2.LLMChoice(base_url="http://elsewhere/v1", api_key="sk-own", model="m"))
    assert (own.api_key, own.model) == ("sk-own", "m") and "sk-own" not in own.describe()


def test_a_per_request_llm_is_used_and_not_echoed(tmp_path, llm):
    llm.behaviour, llm.responder = "good", lambda messages, model: f"Context by {model}."
    harness = Harness(tmp_path / "cache.sqlite3", llm_base_url="")  # nothing configured
    choice = chunker_pb2.LLMChoice(base_url=llm.base_url, model="chosen-model", api_key="sk-request")
    result = result_of(harness.process("contextual_retrieval", llm=choice))
    assert result.llm == f"chosen-model at {llm.base_url}" and "sk-request" not in str(result)
    chunks = [i.chunk for i in harness.indexed[("doc-1", "contextual_retrieval")][1]]
    assert chunks[0].enriched_content.startswith("Context by chosen-model.")


# -- the cache ------------------------------------------------------------------


def test_the_cache_embeds_each_text_once_and_keeps_models_apart(tmp_path):
    cache, provider = EmbeddingCache(tmp_path / "c.sqlite3"), HashedProvider()
    first = cache.embed(provider, ["alpha", "beta", "alpha"])
    assert (first.cached, provider.texts_embedded) == (0, 2)
    assert np.allclose(first.vectors[0], first.vectors[2])
    second = cache.embed(provider, ["beta", "gamma"])
    assert (second.cached, provider.texts_embedded) == (1, 3)
    assert np.allclose(second.vectors[0], first.vectors[1])

    other = HashedProvider()
    other.name = "another-model"
    assert cache.embed(other, ["alpha"]).cached == 0  # the key includes the model


def test_the_cache_survives_a_restart_and_its_own_loss(tmp_path):
    path, provider = tmp_path / "c.sqlite3", HashedProvider()
    first = EmbeddingCache(path)
    first.embed(provider, ["alpha", "beta"])
    first.close()
    restarted = EmbeddingCache(path)
    assert restarted.embed(provider, ["alpha", "beta"]).cached == 2 and provider.texts_embedded == 2
    restarted.close()
    path.write_bytes(b"this is not a database" * 100)  # corrupted: set aside, start empty
    broken = EmbeddingCache(path)
    result = broken.embed(provider, ["alpha", "beta"])
    assert result.cached == 0 and result.vectors.shape == (2, 64)
    assert list(tmp_path.glob("c.sqlite3.broken-*"))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM models").fetchone() == (1,)


def test_the_cache_on_disk_keeps_to_its_size_by_forgetting_what_was_used_longest_ago(tmp_path):
    path, provider = tmp_path / "c.sqlite3", HashedProvider()
    limit = 600_000  # bytes: about 1,600 vectors of 64 float32 with their keys
    cache = EmbeddingCache(path, memory_items=0, max_bytes=limit)
    old = [f"old text {i}" for i in range(1000)]
    cache.embed(provider, old)
    cache.embed(provider, old[:100])  # read again: now among the most recently used
    cache.embed(provider, [f"new text {i}" for i in range(1000)])
    assert cache._disk.live_bytes() <= limit
    cache.close()

    restarted = EmbeddingCache(path, memory_items=0, max_bytes=limit)
    assert restarted.embed(provider, old[:100]).cached == 100  # used lately: kept
    assert restarted.embed(provider, old[500:600]).cached == 0  # used longest ago: forgotten
    assert restarted.embed(provider, ["new text 999"]).cached == 1
    restarted.close()


def test_a_vector_kept_hot_in_memory_does_not_age_out_on_disk(tmp_path):
    path, provider = tmp_path / "c.sqlite3", HashedProvider()
    limit, clock = 600_000, [0.0]
    cache = EmbeddingCache(path, memory_items=5000, max_bytes=limit, clock=lambda: clock[0])
    old = [f"old text {i}" for i in range(1000)]
    cache.embed(provider, old)
    clock[0] += 3600
    assert cache.embed(provider, old[:100]).cached == 100  # found in memory: the disk rows are marked used
    cache.embed(provider, [f"new text {i}" for i in range(1000)])  # past the limit: the oldest rows go
    cache.close()

    restarted = EmbeddingCache(path, memory_items=0, max_bytes=limit)
    assert restarted.embed(provider, old[:100]).cached == 100
    assert restarted.embed(provider, old[500:600]).cached == 0
    restarted.close()


def test_a_cache_file_from_before_the_size_limit_is_still_read(tmp_path):
    path, provider = tmp_path / "c.sqlite3", HashedProvider()
    vector = provider.embed_documents(["alpha"])[0]
    with sqlite3.connect(path) as db:  # the layout without the "used" column
        db.execute("CREATE TABLE models (namespace TEXT PRIMARY KEY, tbl TEXT NOT NULL)")
        tbl = "v_" + hashlib.sha256(provider.cache_namespace.encode()).hexdigest()[:16]
        db.execute(f"CREATE TABLE {tbl} (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID")
        db.execute("INSERT INTO models VALUES (?, ?)", (provider.cache_namespace, tbl))
        db.execute(
            f"INSERT INTO {tbl} VALUES (?, ?)", (content_key(provider.cache_namespace, "alpha"), vector.tobytes())
        )
    cache = EmbeddingCache(path, max_bytes=1_000_000)
    result = cache.embed(provider, ["alpha", "beta"])
    assert result.cached == 1 and np.allclose(result.vectors[0], vector)
    cache.close()


# -- exact counts without re-tokenizing -------------------------------------------

mixed = st.lists(
    st.sampled_from(
        ["word", " word", "  ", " ", "\n", "\n\n", "\t", ".", "'s", "123456", "é", "日本語", "🎉", "\r\n", "x", "-"]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mixed, data=st.data())
def test_a_slice_count_equals_tokenizing_the_slice(text, data):
    token_map = TokenMap(text)
    if len(token_map) == 0:
        return
    start = data.draw(st.integers(0, len(token_map) - 1))
    end = data.draw(st.integers(start, len(token_map)))
    a, b = token_map.offsets[start], token_map.offsets[end]
    assert token_map.count(start, end) == tokens.count(text[a:b])


# -- through gRPC -------------------------------------------------------------


@pytest.fixture(scope="module")
def llm_stack(tmp_path_factory, llm):
    """The four services, the chunker's LLM at the local test server (1 s timeout, no retries)."""
    running = Stack(
        data_dir=tmp_path_factory.mktemp("pipeline"),
        extra_env={
            "CHUNKLAB_LLM_BASE_URL": llm.base_url,
            "CHUNKLAB_LLM_API_KEY": "sk-stack-secret",
            "CHUNKLAB_LLM_MODEL": "fake-llm",
            "CHUNKLAB_LLM_TIMEOUT_S": "1",
            "CHUNKLAB_LLM_MAX_RETRIES": "0",
        },
    ).start()
    yield running
    running.stop()


@pytest.fixture
def good_llm(llm):
    llm.behaviour, llm.script = "good", []
    llm.responder = lambda messages, model: "Situating context for this part."
    return llm


def upload(stack, name: str, text: str) -> str:
    return stack.client().upload_document(text.encode(), name=name, language="en").document.document_id


def topic_text(topic: str, paragraphs: int = 6) -> str:
    return (
        "\n\n".join(
            f"Paragraph {i} about {topic}. The {topic} team reviewed item {i} and wrote down what changed, "
            f"why it changed and who approved the change to {topic} procedures."
            for i in range(paragraphs)
        )
        + "\n"
    )


def spec(name: str, **knobs: int) -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(name=name, knobs={k: common_pb2.KnobValue(int_value=v) for k, v in knobs.items()})


def process(stack, document_id: str, *specs) -> list[chunker_pb2.ProcessDocumentEvent]:
    return list(stack.client().process_document(document_id, specs))


def indexed(stack, document_id: str, strategy: str) -> list[common_pb2.Chunk]:
    response = stack.client().retrieve(
        "what changed and who approved it",
        common_pb2.RetrievalOptions(
            strategy=strategy, top_k=100, filter=common_pb2.RetrievalFilter(document_ids=[document_id])
        ),
    )
    return [r.chunk for r in response.retrieved_chunks]


def test_a_good_llm_gives_enriched_chunks_through_grpc(llm_stack, good_llm):
    document_id = upload(llm_stack, "enriched.md", topic_text("payroll"))
    result = result_of(
        process(
            llm_stack,
            document_id,
            spec("fixed_size", chunk_size=40, chunk_overlap=0),
            spec("contextual_retrieval", chunk_size=40, chunk_overlap=0),
        )
    )
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size", "contextual_retrieval"]
    assert result.llm == f"fake-llm at {good_llm.base_url}" and "sk-stack-secret" not in str(result)
    contextual = result.strategies_completed[1]
    chunks = indexed(llm_stack, document_id, "contextual_retrieval")
    assert len(chunks) == contextual.chunk_count == contextual.usage.llm_calls
    for chunk in chunks:
        assert chunk.enriched_content == f"Situating context for this part.\n\n{chunk.content}"
        assert chunk.embedding_model == Settings().embedding_model
    plain = indexed(llm_stack, document_id, "fixed_size")
    assert sorted(c.content for c in plain) == sorted(c.content for c in chunks)

    preview = channels.chunker(llm_stack.addresses["chunker"]).PreviewChunks(
        chunker_pb2.PreviewChunksRequest(
            document_id=document_id, strategy=spec("contextual_retrieval", chunk_size=40, chunk_overlap=0)
        ),
        timeout=60,
    )
    assert preview.chunks[0].enriched_content.startswith("Situating context") and preview.usage.llm_calls == len(
        preview.chunks
    )


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [("error", "HTTP 500"), ("slow", "did not answer within 1s"), ("garbage", "unusable reply")],
)
def test_llm_failures_through_grpc_fail_only_the_contextual_strategy(llm_stack, llm, behaviour, reason):
    document_id = upload(llm_stack, f"{behaviour}.md", topic_text(f"{behaviour} handling"))
    llm.behaviour, llm.script, llm.delay_s = behaviour, [], 3
    result = result_of(
        process(
            llm_stack,
            document_id,
            spec("fixed_size", chunk_size=40, chunk_overlap=0),
            spec("contextual_retrieval", chunk_size=40, chunk_overlap=0),
        )
    )
    assert [o.strategy for o in result.strategies_completed] == ["fixed_size"]
    assert [f.strategy for f in result.strategies_failed] == ["contextual_retrieval"]
    assert reason in result.strategies_failed[0].reason and "sk-stack-secret" not in result.strategies_failed[0].reason
    assert indexed(llm_stack, document_id, "contextual_retrieval") == []
    assert len(indexed(llm_stack, document_id, "fixed_size")) == result.strategies_completed[0].chunk_count


def test_a_failed_rerun_leaves_the_previous_chunks_whole(llm_stack, good_llm):
    document_id = upload(llm_stack, "kept.md", topic_text("archive"))
    result_of(process(llm_stack, document_id, spec("contextual_retrieval", chunk_size=40, chunk_overlap=0)))
    before = sorted((c.chunk_id, c.enriched_content) for c in indexed(llm_stack, document_id, "contextual_retrieval"))
    good_llm.script = ["good", "good", "error"]  # fails part-way through the second run
    good_llm.behaviour = "good"
    good_llm.responder = lambda messages, model: "A different context."
    result = result_of(process(llm_stack, document_id, spec("contextual_retrieval", chunk_size=40, chunk_overlap=0)))
    assert result.strategies_failed and not result.strategies_completed
    after = sorted((c.chunk_id, c.enriched_content) for c in indexed(llm_stack, document_id, "contextual_retrieval"))
    assert after == before


def test_reprocessing_replaces_at_once_and_reuses_embeddings(llm_stack, good_llm):
    document_id = upload(llm_stack, "replaced.md", topic_text("facilities", paragraphs=10))
    first = result_of(process(llm_stack, document_id, spec("fixed_size", chunk_size=40, chunk_overlap=0)))
    assert first.strategies_completed[0].embeddings_cached == 0
    events = process(llm_stack, document_id, spec("fixed_size", chunk_size=40, chunk_overlap=0))
    again = result_of(events).strategies_completed[0]
    assert again.embeddings_cached == again.chunk_count == first.strategies_completed[0].chunk_count
    completed = [e.progress for e in events if e.HasField("progress") and e.progress.phase == COMPLETED]
    assert completed[0].embeddings_cached == again.chunk_count

    bigger = result_of(process(llm_stack, document_id, spec("fixed_size", chunk_size=90, chunk_overlap=10)))
    outcome = bigger.strategies_completed[0]
    chunks = indexed(llm_stack, document_id, "fixed_size")
    assert len(chunks) == outcome.chunk_count < again.chunk_count  # never a mix of old and new
    assert {c.config_id for c in chunks} == {outcome.config_id}
    assert len({c.chunk_id for c in chunks}) == len(chunks)  # never duplicates
    assert sorted(c.chunk_index for c in chunks) == list(range(len(chunks)))


def test_grpc_progress_events_come_in_order(llm_stack, good_llm):
    document_id = upload(llm_stack, "progress.md", topic_text("progress"))
    events = process(
        llm_stack,
        document_id,
        spec("fixed_size", chunk_size=40, chunk_overlap=0),
        spec("contextual_retrieval", chunk_size=40, chunk_overlap=0),
    )
    steps = [(e.progress.strategy, e.progress.phase) for e in events[:-1]]
    assert steps[0] == ("fixed_size", STARTED)
    done = steps.index(("fixed_size", COMPLETED))
    assert steps[done + 1] == ("contextual_retrieval", STARTED) and steps[-1] == ("contextual_retrieval", COMPLETED)
    assert all(phase == RUNNING for _, phase in steps[1:done] + steps[done + 2 : -1])


def test_grpc_errors_are_precise(llm_stack):
    chunker = channels.chunker(llm_stack.addresses["chunker"])
    with pytest.raises(grpc.RpcError) as caught:
        list(
            chunker.ProcessDocument(
                chunker_pb2.ProcessDocumentRequest(document_id="no-such-document", strategies=[spec("fixed_size")]),
                timeout=30,
            )
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        list(
            chunker.ProcessDocument(
                chunker_pb2.ProcessDocumentRequest(
                    document_id="x", strategies=[spec("fixed_size")], embedding_model="openai:text-embedding-3-small"
                ),
                timeout=30,
            )
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "CHUNKLAB_EMBEDDING_BASE_URL" in caught.value.details()
    listing = chunker.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=10)
    assert "multilingual-e5-small" in listing.embedding_models and listing.llm.startswith("fake-llm at ")


def test_a_strategy_that_embeds_while_it_chunks_says_how_far_that_embedding_is():
    from services.chunker.cache import EmbeddingCache

    said: list[tuple[float, str]] = []
    strategy_run = run_module.StrategyRun(
        HashedProvider(), EmbeddingCache(None), llm=None, endpoint=None, progress=None, cancelled=threading.Event()
    )
    context = strategy_run.context(lambda fraction, message: said.append((fraction, message)))
    vectors = context.embed(["one sentence.", "another sentence.", "one sentence."])
    assert vectors.shape[0] == 3
    # The bar stays where the strategy put it (0 within its phase); the words say what is embedded.
    assert said and said[-1] == (0.0, "embedding 3/3 pieces")
