"""Property-based fuzzing of every RPC (issue 14): hypothesis builds request messages from
the contracts' descriptors (empty, huge, negative, NaN and infinite, unknown enum values,
random ids and page tokens, timestamps out of range) and sends them to a stack of its own.
Whatever comes back, no call gets UNKNOWN or INTERNAL, none runs past its deadline, and
every service still answers its health check afterwards.

A short run in CI; a long one by a command:

    CHUNKLAB_FUZZ_EXAMPLES=500 .venv/bin/python -m pytest tests/e2e/test_fuzz_rpcs.py -p no:cacheprovider
"""

from __future__ import annotations

import math
import os

import grpc
import pytest
from google.protobuf import descriptor as d
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab.rpc import channels
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from chunklab_app.stack import Stack

pytestmark = pytest.mark.e2e

EXAMPLES = int(os.environ.get("CHUNKLAB_FUZZ_EXAMPLES", "12"))
DEADLINE_S = 30.0
MAX_DEPTH = 3
# Streamed replies read at most this far (an answer, an experiment's progress).
MAX_REPLIES = 50
SERVICES = {
    "ingest": (ingest_pb2, channels.ingest),
    "chunker": (chunker_pb2, channels.chunker),
    "retriever": (retriever_pb2, channels.retriever),
    "evaluator": (evaluator_pb2, channels.evaluator),
}
# Statuses no request may get: the service did not know what happened, or ran past the deadline.
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED}

TEXTS = st.one_of(
    st.just(""),
    st.text(max_size=40),
    st.sampled_from(
        [
            "../../etc/passwd",
            "default",
            "fixed_size",
            "all-MiniLM-L6-v2",
            "00000000-0000-0000-0000-000000000000",
            "\x00",
            "é" * 300,
        ]
    ),
    st.builds(lambda n: "x" * n, st.sampled_from([1000, 100_000, 2_000_000])),
)
INTS = st.one_of(st.integers(-5, 300), st.sampled_from([-(2**31), 2**31 - 1, 10**6]))
INTS64 = st.one_of(INTS, st.sampled_from([-(2**63), 2**63 - 1, 253402300800, -62135596801]))
FLOATS = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0]))
BYTES = st.one_of(st.just(b""), st.binary(max_size=64), st.just(b"PK\x03\x04" + b"\x00" * 40))


def scalar(field: d.FieldDescriptor):
    if field.type == d.FieldDescriptor.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.sampled_from([-1, 97, 2**31 - 1]))
    if field.type == d.FieldDescriptor.TYPE_STRING:
        return TEXTS
    if field.type == d.FieldDescriptor.TYPE_BYTES:
        return BYTES
    if field.type == d.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if field.type in (d.FieldDescriptor.TYPE_FLOAT, d.FieldDescriptor.TYPE_DOUBLE):
        return FLOATS
    if field.type in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if field.type in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if field.type in (d.FieldDescriptor.TYPE_INT64, d.FieldDescriptor.TYPE_SINT64, d.FieldDescriptor.TYPE_SFIXED64):
        return INTS64
    return INTS


def fill(data, message: Message, depth: int = 0) -> Message:
    """Sets a drawn subset of the message's fields to drawn values, recursively."""
    for field in message.DESCRIPTOR.fields:
        if not data.draw(st.booleans()):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            if depth < MAX_DEPTH:
                value_field = field.message_type.fields_by_name["value"]
                for _ in range(data.draw(st.integers(0, 2))):
                    key = data.draw(
                        TEXTS
                        if field.message_type.fields_by_name["key"].type == d.FieldDescriptor.TYPE_STRING
                        else INTS
                    )
                    target = getattr(message, field.name)
                    if value_field.message_type is not None:
                        fill(data, target[key], depth + 1)
                    else:
                        target[key] = data.draw(scalar(value_field))
            continue
        repeated = field.is_repeated
        count = data.draw(st.integers(0, 3)) if repeated else 1
        for _ in range(count):
            if field.message_type is not None:
                if depth >= MAX_DEPTH:
                    break
                child = getattr(message, field.name).add() if repeated else getattr(message, field.name)
                if field.message_type.full_name == "google.protobuf.Timestamp":
                    child.seconds = data.draw(INTS64)
                    child.nanos = data.draw(st.sampled_from([0, 999_999_999, -1, 2**31 - 1]))
                else:
                    fill(data, child, depth + 1)
                    child.SetInParent()
            else:
                value = data.draw(scalar(field))
                if repeated:
                    getattr(message, field.name).append(value)
                else:
                    setattr(message, field.name, value)
    return message


def methods():
    for service, (module, _) in SERVICES.items():
        (descriptor,) = [s for s in module.DESCRIPTOR.services_by_name.values()]
        for method in descriptor.methods:
            yield pytest.param(service, method, id=f"{service}.{method.name}")


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    """A stack of its own: fuzzing changes freshness windows and sweeps, which no other test should see."""
    stack = Stack(data_dir=tmp_path_factory.mktemp("fuzz-stack"), extra_env={"CHUNKLAB_SWEEP_INTERVAL_S": "0"})
    stack.start()
    yield stack
    stack.stop()


def call(stack: Stack, service: str, method: d.MethodDescriptor, requests: list[Message]) -> None:
    stub = SERVICES[service][1](stack.addresses[service])
    behaviour = getattr(stub, method.name)
    argument = iter(requests) if method.client_streaming else requests[0]
    try:
        reply = behaviour(argument, timeout=DEADLINE_S)
        if method.server_streaming:
            for number, _ in enumerate(reply):
                if number >= MAX_REPLIES:
                    reply.cancel()
                    break
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.CANCELLED:
            return
        assert error.code() not in FORBIDDEN, f"{service}.{method.name}: {error.code().name}: {error.details()[:300]}"
        assert error.details() and len(error.details()) < 4000, (
            f"{service}.{method.name}: message of {len(error.details())} chars"
        )


@pytest.mark.parametrize("service, method", list(methods()))
def test_no_request_gets_unknown_or_internal_or_runs_past_its_deadline(fuzzed, service, method):
    request_class = SERVICES[service][0].__dict__.get(method.input_type.name) or getattr(
        SERVICES[service][0], method.input_type.name
    )

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def run(data):
        count = data.draw(st.integers(1, 3)) if method.client_streaming else 1
        call(fuzzed, service, method, [fill(data, request_class()) for _ in range(count)])

    run()
    health = health_pb2_grpc.HealthStub(channels.channel(fuzzed.addresses[service]))
    assert health.Check(health_pb2.HealthCheckRequest(), timeout=30).status == health_pb2.HealthCheckResponse.SERVING


# -- the hostile requests of issue 31, each refused precisely (or normalised) ---------------

NOTES = b"# Notes\n\nThe harbour light turns once every ten seconds, all night long.\n"
INVALID = grpc.StatusCode.INVALID_ARGUMENT


def upload(stack: Stack, data: bytes, pieces: list[bytes] | None = None, **header) -> ingest_pb2.CreateDocumentResponse:
    header.setdefault("name", "notes.md")
    header.setdefault("format", documents_pb2.DOCUMENT_FORMAT_MARKDOWN)
    requests = [ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(**header))]
    requests += [ingest_pb2.CreateDocumentRequest(data=piece) for piece in (pieces or [data])]
    return channels.ingest(stack.addresses["ingest"]).CreateDocument(iter(requests), timeout=DEADLINE_S)


def refusal(call_it, codes: set[grpc.StatusCode] = frozenset({INVALID})) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        call_it()
    assert caught.value.code() in codes, (caught.value.code(), caught.value.details())
    return caught.value.details()


def test_uploads_that_lie_about_themselves_are_refused_and_store_nothing(fuzzed):
    ingest = channels.ingest(fuzzed.addresses["ingest"])
    before = len(ingest.ListDocuments(ingest_pb2.ListDocumentsRequest(page_size=100), timeout=30).documents)
    # A file name is a display name: the path in front of it goes.
    stored = upload(fuzzed, NOTES, name="../../traversal.md").document
    assert stored.name == "traversal.md"
    assert "size" in refusal(lambda: upload(fuzzed, NOTES + b"\n", size_bytes=-1))
    assert "size" in refusal(lambda: upload(fuzzed, NOTES + b"\n\n", size_bytes=10))
    # The contract's 1 MiB per data message (a larger one may already stop at gRPC's own limit).
    refusal(
        lambda: upload(fuzzed, b"", [b"# Big\n\n" + b"word " * 500_000]),
        {INVALID, grpc.StatusCode.RESOURCE_EXHAUSTED},
    )
    assert "zz" in refusal(lambda: upload(fuzzed, NOTES + b"\n\n\n", language="zz"))
    refusal(lambda: upload(fuzzed, b"# Broken\n\nA lone surrogate \xed\xa0\x80 here.\n", name="broken.md"))
    assert "not a language!" in refusal(
        lambda: ingest.ListDocuments(ingest_pb2.ListDocumentsRequest(language="not a language!"), timeout=30)
    )
    after = ingest.ListDocuments(ingest_pb2.ListDocumentsRequest(page_size=100), timeout=30).documents
    assert len(after) == before + 1  # only the renamed one


def test_an_index_write_without_chunks_leaves_the_set_as_it_was(fuzzed):
    document = upload(fuzzed, NOTES.replace(b"Notes", b"Index writes"), name="writes.md").document
    spec = common_pb2.StrategySpec(name="fixed_size")
    fuzzed.client().process(document.document_id, [spec])
    (indexed,) = fuzzed.client().list_indexed_sets("fixed_size", document.document_id)
    header = retriever_pb2.IndexHeader(
        document_id=document.document_id,
        strategy="fixed_size",
        config_id=indexed.config_id,
        embedding_model=indexed.embedding_model,
        spec=indexed.spec,
    )
    retriever = channels.retriever(fuzzed.addresses["retriever"])
    refusal(lambda: retriever.IndexChunks(iter([retriever_pb2.IndexChunksRequest(header=header)]), timeout=30))
    (kept,) = fuzzed.client().list_indexed_sets("fixed_size", document.document_id)
    assert (kept.points, kept.active) == (indexed.points, indexed.active) and kept.points > 0
    assert "../etc" in refusal(
        lambda: retriever.ListIndexedSets(retriever_pb2.ListIndexedSetsRequest(strategy="../etc"), timeout=30)
    )


def test_question_sets_with_one_id_twice_or_a_file_url_for_a_model_are_refused_before_anything_is_stored(fuzzed):
    evaluator = channels.evaluator(fuzzed.addresses["evaluator"])
    before = len(
        evaluator.ListQuestionSets(evaluator_pb2.ListQuestionSetsRequest(page_size=100), timeout=30).question_sets
    )
    twice = [evaluator_pb2.Question(question_id="q1", text=text) for text in ("Who?", "Where?")]
    assert "q1" in refusal(
        lambda: evaluator.CreateQuestionSet(
            evaluator_pb2.CreateQuestionSetRequest(name="twice", questions=twice), timeout=30
        )
    )
    document = upload(fuzzed, NOTES.replace(b"Notes", b"Generated"), name="generated.md").document
    generate = evaluator_pb2.GenerateQuestionSetRequest(
        name="passwords",
        document_ids=[document.document_id],
        question_count=2,
        generator_model=evaluator_pb2.ModelEndpoint(base_url="file:///etc/passwd", model="any"),
    )
    assert "file" in refusal(lambda: list(evaluator.GenerateQuestionSet(generate, timeout=30)))
    after = evaluator.ListQuestionSets(evaluator_pb2.ListQuestionSetsRequest(page_size=100), timeout=30).question_sets
    assert len(after) == before
