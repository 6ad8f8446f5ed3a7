"""Tracing across the services (ADR 0066): the stack's four services as
processes exporting to a real OTLP/gRPC receiver in the test, and the test
process as the UI's client (service chunklab-ui). An upload and its
processing are one trace through ingest, the chunker and the retriever; a
Retrieve and a Query (Answer, through the evaluator) are one trace each, with
every span's parent the span of the hop before. Without an endpoint nothing
is exported, nothing of the SDK is loaded and everything works."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from chunklab.client import ChunkLab
from chunklab.rpc import tracing
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app.stack import REPO, Stack
from tests.support.otlp_receiver import ReceivedSpan, Receiver

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parents[1] / "fixtures" / "topics.md"
QUESTION = "Which topic is about rivers?"
INGEST, CHUNKER, RETRIEVER, EVALUATOR = (
    f"chunklab.v1.{s}Service" for s in ("Ingest", "Chunker", "Retriever", "Evaluator")
)
UI = "chunklab-ui"


@pytest.fixture(scope="module")
def receiver():
    with Receiver() as running:
        yield running


@pytest.fixture(scope="module")
def traced(receiver, tmp_path_factory):
    """The four services, each exporting its spans to the receiver (batched every 50 ms)."""
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    with Stack(data_dir=tmp_path_factory.mktemp("traced"), extra_env=env) as running:
        yield running


@contextmanager
def as_the_ui(stack: Stack):
    """The test process traced as the UI is: a client whose calls begin the traces."""
    settings = stack.settings()
    assert tracing.start("ui", settings)
    try:
        yield ChunkLab.at(stack.addresses, settings)
    finally:
        tracing.stop()  # sends what is queued, and leaves later tests untraced


def fixed_size() -> common_pb2.StrategySpec:
    return common_pb2.StrategySpec(
        name="fixed_size",
        knobs={"chunk_size": common_pb2.KnobValue(int_value=41), "chunk_overlap": common_pb2.KnobValue(int_value=0)},
    )


def options(document_id: str) -> common_pb2.RetrievalOptions:
    return common_pb2.RetrievalOptions(
        strategy="fixed_size", top_k=2, filter=common_pb2.RetrievalFilter(document_ids=[document_id])
    )


def links(spans: list[ReceivedSpan]) -> set[tuple[str, str, str, str, str]]:
    """(service, span name, kind, parent's service, parent's name) of every span; a root's parent is ("", "")."""
    by_id = {span.span_id: span for span in spans}
    missing = ReceivedSpan("?", "?", "", "", "", "", {})  # a parent not received (yet)
    parents = {s.span_id: by_id.get(s.parent_id, missing) if s.parent_id else None for s in spans}
    return {
        (s.service, s.name, s.kind, *((p.service, p.name) if (p := parents[s.span_id]) else ("", ""))) for s in spans
    }


def one_trace(receiver: Receiver, expected: set) -> list[ReceivedSpan]:
    """Waits for the expected spans, then checks they are all there is: one trace, nothing else."""
    spans = receiver.wait_for(lambda got: len(got) >= len(expected))
    assert len({span.trace_id for span in spans}) == 1, sorted((s.trace_id, s.service, s.name) for s in spans)
    assert links(spans) == expected
    return spans


def named(spans: list[ReceivedSpan], service: str, name: str) -> ReceivedSpan:
    (span,) = [s for s in spans if s.service == service and s.name == name]
    return span


def assert_no_text(spans: list[ReceivedSpan], *texts: str) -> None:
    values = [v for s in spans for v in s.attributes.values() if isinstance(v, str)]
    assert not [v for v in values for text in texts if len(v) > 3 and v in text], values


@pytest.fixture(scope="module")
def uploaded(traced, receiver):
    """An upload and its processing under one span of the UI's: the document and the spans sent."""
    receiver.clear()
    with as_the_ui(traced) as client, tracing.span("upload and process"):
        document = client.upload_document(FIXTURE, language="en").document
        result = client.process(document.document_id, [fixed_size()])
    assert [outcome.strategy for outcome in result.strategies_completed] == ["fixed_size"]
    spans = one_trace(receiver, UPLOAD_AND_PROCESS)
    return document, spans


UPLOAD_AND_PROCESS = {
    (UI, "upload and process", "INTERNAL", "", ""),
    (UI, f"{INGEST}/CreateDocument", "CLIENT", UI, "upload and process"),
    ("chunklab-ingest", f"{INGEST}/CreateDocument", "SERVER", UI, f"{INGEST}/CreateDocument"),
    (UI, f"{CHUNKER}/ProcessDocument", "CLIENT", UI, "upload and process"),
    ("chunklab-chunker", f"{CHUNKER}/ProcessDocument", "SERVER", UI, f"{CHUNKER}/ProcessDocument"),
    ("chunklab-chunker", f"{INGEST}/GetDocument", "CLIENT", "chunklab-chunker", f"{CHUNKER}/ProcessDocument"),
    ("chunklab-ingest", f"{INGEST}/GetDocument", "SERVER", "chunklab-chunker", f"{INGEST}/GetDocument"),
    # The strategy runs in a thread of its own, in the same trace.
    ("chunklab-chunker", "run strategy", "INTERNAL", "chunklab-chunker", f"{CHUNKER}/ProcessDocument"),
    ("chunklab-chunker", f"{RETRIEVER}/IndexChunks", "CLIENT", "chunklab-chunker", "run strategy"),
    ("chunklab-retriever", f"{RETRIEVER}/IndexChunks", "SERVER", "chunklab-chunker", f"{RETRIEVER}/IndexChunks"),
}


def test_an_upload_and_its_processing_are_one_trace_through_ingest_chunker_and_retriever(uploaded):
    document, spans = uploaded
    created = named(spans, "chunklab-ingest", f"{INGEST}/CreateDocument")
    assert created.attributes["chunklab.document_id"] == document.document_id  # from the reply
    assert created.attributes["rpc.grpc.status_code"] == 0 and not created.error
    run = named(spans, "chunklab-chunker", "run strategy")
    assert (run.attributes["chunklab.document_id"], run.attributes["chunklab.strategy"]) == (
        document.document_id,
        "fixed_size",
    )
    indexed = named(spans, "chunklab-retriever", f"{RETRIEVER}/IndexChunks")  # ids from the stream's header
    assert (
        indexed.attributes["chunklab.document_id"],
        indexed.attributes["chunklab.strategy"],
        indexed.attributes["chunklab.config_id"],
    ) == (document.document_id, "fixed_size", run.attributes["chunklab.config_id"])
    assert indexed.attributes["rpc.system"] == "grpc" and indexed.attributes["rpc.method"] == "IndexChunks"
    assert_no_text(spans, FIXTURE.read_text())


def test_a_retrieve_from_the_ui_is_one_trace(traced, receiver, uploaded):
    document, _ = uploaded
    receiver.clear()
    with as_the_ui(traced) as client:
        response = client.retrieve(QUESTION, options(document.document_id))
    assert len(response.retrieved_chunks) == 2
    spans = one_trace(
        receiver,
        {
            (UI, f"{RETRIEVER}/Retrieve", "CLIENT", "", ""),
            ("chunklab-retriever", f"{RETRIEVER}/Retrieve", "SERVER", UI, f"{RETRIEVER}/Retrieve"),
        },
    )
    for span in spans:
        assert (span.attributes["chunklab.strategy"], span.attributes["rpc.grpc.status_code"]) == ("fixed_size", 0)
    assert_no_text(spans, QUESTION, FIXTURE.read_text())


def test_a_query_from_the_ui_is_one_trace_through_the_evaluator_and_the_retriever(traced, receiver, uploaded):
    document, _ = uploaded
    receiver.clear()
    with as_the_ui(traced) as client:
        events = list(
            client.answer(evaluator_pb2.AnswerRequest(question=QUESTION, retrieval=options(document.document_id)))
        )
    assert len(events[0].context.retrieved_chunks) == 2
    spans = one_trace(
        receiver,
        {
            (UI, f"{EVALUATOR}/Answer", "CLIENT", "", ""),
            ("chunklab-evaluator", f"{EVALUATOR}/Answer", "SERVER", UI, f"{EVALUATOR}/Answer"),
            # The evaluator checks the strategy with the chunker, then retrieves.
            ("chunklab-evaluator", f"{CHUNKER}/ListStrategies", "CLIENT", "chunklab-evaluator", f"{EVALUATOR}/Answer"),
            (
                "chunklab-chunker",
                f"{CHUNKER}/ListStrategies",
                "SERVER",
                "chunklab-evaluator",
                f"{CHUNKER}/ListStrategies",
            ),
            ("chunklab-evaluator", f"{RETRIEVER}/Retrieve", "CLIENT", "chunklab-evaluator", f"{EVALUATOR}/Answer"),
            ("chunklab-retriever", f"{RETRIEVER}/Retrieve", "SERVER", "chunklab-evaluator", f"{RETRIEVER}/Retrieve"),
        },
    )
    assert named(spans, "chunklab-retriever", f"{RETRIEVER}/Retrieve").attributes["chunklab.strategy"] == "fixed_size"
    assert_no_text(spans, QUESTION, FIXTURE.read_text())


def test_an_experiment_is_one_trace_with_its_runs_on_the_evaluators_worker(traced, receiver, uploaded):
    """The experiment runs on a thread of the evaluator's: its processing and retrieval are still
    children of the RunExperiment call, through the `run experiment` span."""
    document, _ = uploaded
    question = "How are distances to galaxies measured?"
    line = json.dumps(
        {"question": question, "references": [{"document": "topics", "content": FIXTURE.read_text().split("\n\n")[0]}]}
    )
    receiver.clear()
    with as_the_ui(traced) as client, tracing.span("evaluate"):
        question_set = client.import_question_set(
            line.encode(), name="traced.jsonl", document_ids={"topics": document.document_id}
        )
        config = evaluator_pb2.ExperimentConfig(
            name="traced",
            question_set_id=question_set.question_set_id,
            retrieval_only=True,
            strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
            retrieval=common_pb2.RetrievalOptions(top_k=2),
        )
        events = list(client.run_experiment(config))
    assert events[-1].experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, events[-1]
    experiment_id = events[-1].experiment.experiment_id
    expected = {
        (UI, f"{EVALUATOR}/RunExperiment", "CLIENT", UI, "evaluate"),
        ("chunklab-evaluator", f"{EVALUATOR}/RunExperiment", "SERVER", UI, f"{EVALUATOR}/RunExperiment"),
        ("chunklab-evaluator", "run experiment", "INTERNAL", "chunklab-evaluator", f"{EVALUATOR}/RunExperiment"),
        ("chunklab-evaluator", f"{CHUNKER}/ProcessDocument", "CLIENT", "chunklab-evaluator", "run experiment"),
        (
            "chunklab-chunker",
            f"{CHUNKER}/ProcessDocument",
            "SERVER",
            "chunklab-evaluator",
            f"{CHUNKER}/ProcessDocument",
        ),
        ("chunklab-chunker", "run strategy", "INTERNAL", "chunklab-chunker", f"{CHUNKER}/ProcessDocument"),
        ("chunklab-retriever", f"{RETRIEVER}/IndexChunks", "SERVER", "chunklab-chunker", f"{RETRIEVER}/IndexChunks"),
        ("chunklab-evaluator", f"{RETRIEVER}/Retrieve", "CLIENT", "chunklab-evaluator", "run experiment"),
        ("chunklab-retriever", f"{RETRIEVER}/Retrieve", "SERVER", "chunklab-evaluator", f"{RETRIEVER}/Retrieve"),
    }
    # Every expected span there, and every span's parent too (spans come from four processes).
    spans = receiver.wait_for(lambda got: expected <= (found := links(got)) and not any("?" in f[3:] for f in found))
    assert len({span.trace_id for span in spans}) == 1
    assert named(spans, "chunklab-evaluator", "run experiment").attributes == {"chunklab.experiment_id": experiment_id}
    assert_no_text(spans, FIXTURE.read_text(), question)


# What a process with tracing off does: starts it (in vain), opens a channel and calls the retriever.
OFF_PROBE = """
import json, sys
from chunklab.rpc import channels, tracing
from chunklab.settings import load_settings
from chunklab.v1 import retriever_pb2

settings = load_settings()
on = tracing.start("retriever", settings)
channel = channels.channel(settings.retriever_address, settings)
limits = channels.retriever(settings.retriever_address, settings).GetRetrievalLimits(
    retriever_pb2.GetRetrievalLimitsRequest(), timeout=30)
print(json.dumps({"tracing": on, "channel": type(channel).__module__, "server_interceptors": tracing.server_interceptors(),
                  "max_top_k": limits.max_top_k,
                  "opentelemetry_modules": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""


def test_without_an_endpoint_nothing_is_exported_nothing_of_the_sdk_is_loaded_and_calls_work(stack, receiver):
    """The session's stack runs without an endpoint (as every other e2e test uses it);
    a process without one, or with OTEL_SDK_DISABLED=true beside one, traces nothing."""
    receiver.clear()
    max_top_k = stack.client().retrieval_limits().max_top_k
    for off in (
        {"OTEL_EXPORTER_OTLP_ENDPOINT": ""},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SDK_DISABLED": "true"},
    ):
        probe = subprocess.run(
            [sys.executable, "-c", OFF_PROBE],
            env={**stack.env(), **off},
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert probe.returncode == 0, probe.stderr
        assert json.loads(probe.stdout) == {
            "tracing": False,
            "channel": "grpc._channel",
            "server_interceptors": [],
            "max_top_k": max_top_k,
            "opentelemetry_modules": [],
        }
    assert not tracing.start("ui", stack.settings()) and not tracing.active()
    assert stack.client().retrieval_limits().max_top_k == max_top_k
    assert receiver.spans == []
