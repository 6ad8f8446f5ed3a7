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
from chunklab.v1 import chunker_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
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
