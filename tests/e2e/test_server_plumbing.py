"""What every server shares: health, reflection, status mapping and a
graceful stop on SIGTERM."""

from __future__ import annotations

import logging
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from chunklab.errors import NotFound
from chunklab.rpc import channels
from chunklab.rpc.server import ErrorMappingInterceptor
from chunklab.v1 import chunker_pb2, chunker_pb2_grpc

SERVICE_NAMES = {
    "ingest": "chunklab.v1.IngestService",
    "chunker": "chunklab.v1.ChunkerService",
    "retriever": "chunklab.v1.RetrieverService",
    "evaluator": "chunklab.v1.EvaluatorService",
}


@pytest.mark.e2e
@pytest.mark.parametrize("service", list(SERVICE_NAMES))
def test_every_service_reports_health_and_describes_itself_by_reflection(stack, service):
    channel = channels.channel(stack.addresses[service])
    health = health_pb2_grpc.HealthStub(channel)
    for name in ("", SERVICE_NAMES[service]):
        reply = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    database = ProtoReflectionDescriptorDatabase(channel)
    assert SERVICE_NAMES[service] in database.get_services()
    assert "grpc.health.v1.Health" in database.get_services()
    descriptor = database.FindFileContainingSymbol(SERVICE_NAMES[service])
    assert descriptor.package == "chunklab.v1"


class Exploding(chunker_pb2_grpc.ChunkerServiceServicer):
    def ListStrategies(self, request, context):
        raise KeyError("a bug")

    def PreviewChunks(self, request, context):
        raise NotFound("no document 'x'")

    def ProcessDocument(self, request, context):
        yield chunker_pb2.ProcessDocumentEvent()
        raise RuntimeError("mid-stream bug")

    def GetBulkLoad(self, request, context):
        raise NotFound("no bulk load " + "b" * 100_000)  # longer than gRPC's 16 KiB trailers


@pytest.fixture
def exploding():
    server = grpc.server(futures.ThreadPoolExecutor(2), interceptors=[ErrorMappingInterceptor()])
    chunker_pb2_grpc.add_ChunkerServiceServicer_to_server(Exploding(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield channels.chunker(f"127.0.0.1:{port}")
    server.stop(0)


INCIDENT = re.compile(r"internal error in (\S+) \(incident ([0-9a-f]{12})\); the service log has the details")


def incident_of(details: str, method: str, caplog) -> logging.LogRecord:
    """The log record an INTERNAL message's incident id names; the message itself
    says where, never what (no exception text reaches the client)."""
    match = INCIDENT.fullmatch(details)
    assert match and match.group(1) == f"/chunklab.v1.ChunkerService/{method}", details
    (record,) = [r for r in caplog.records if match.group(2) in r.getMessage()]
    return record


def test_an_escaped_exception_is_internal_and_names_an_incident_never_its_text(exploding, caplog):
    with pytest.raises(grpc.RpcError) as err:
        exploding.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=5)
    assert err.value.code() == grpc.StatusCode.INTERNAL
    assert "KeyError" not in err.value.details() and "a bug" not in err.value.details()
    record = incident_of(err.value.details(), "ListStrategies", caplog)
    assert record.exc_info[0] is KeyError and record.exc_info[1].args == ("a bug",)


def test_a_domain_error_keeps_its_status_and_message(exploding):
    with pytest.raises(grpc.RpcError) as err:
        exploding.PreviewChunks(chunker_pb2.PreviewChunksRequest(), timeout=5)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert err.value.details() == "no document 'x'"


def test_an_error_in_the_middle_of_a_stream_is_mapped_too(exploding, caplog):
    stream = exploding.ProcessDocument(chunker_pb2.ProcessDocumentRequest(), timeout=5)
    assert next(stream) == chunker_pb2.ProcessDocumentEvent()
    with pytest.raises(grpc.RpcError) as err:
        next(stream)
    assert err.value.code() == grpc.StatusCode.INTERNAL and "mid-stream bug" not in err.value.details()
    assert str(incident_of(err.value.details(), "ProcessDocument", caplog).exc_info[1]) == "mid-stream bug"


class Watcher(grpc.ServerInterceptor):
    """Outside ErrorMappingInterceptor: notes when a stream's handler ended, after the
    mapping had its say, so a test waits for the end, not for a time."""

    def __init__(self):
        self.ended = threading.Event()

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or not handler.stream_stream:
            return handler
        behavior = handler.stream_stream

        def watched(requests, context):
            try:
                yield from behavior(requests, context)
            finally:
                self.ended.set()

        return handler._replace(stream_stream=watched)


def test_a_client_that_hangs_up_mid_stream_is_no_server_error(caplog):
    """A reflection client that goes away while the stream is open (grpcurl, a script
    listing services) leaves no ERROR traceback in the service's log: the request iterator's
    "cancelled" is no internal error (the new-user findings saw one; it happens when the
    cancellation wins the race against the servicer's next read, so not on every run)."""
    from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

    watcher = Watcher()
    server = grpc.server(futures.ThreadPoolExecutor(2), interceptors=[watcher, ErrorMappingInterceptor()])
    reflection.enable_server_reflection([reflection.SERVICE_NAME], server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    caplog.set_level(logging.INFO)
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        requests = queue.Queue()
        requests.put(reflection_pb2.ServerReflectionRequest(list_services=""))
        stream = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(iter(requests.get, None))
        first = next(stream)
        assert [s.name for s in first.list_services_response.service] == [reflection.SERVICE_NAME]
        stream.cancel()  # the server still waits for the next request: the client goes away
        channel.close()
        assert watcher.ended.wait(10)
    finally:
        server.stop(0)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_domain_error_too_long_for_a_status_is_cut_and_still_arrives(exploding):
    with pytest.raises(grpc.RpcError) as err:
        exploding.GetBulkLoad(chunker_pb2.GetBulkLoadRequest(bulk_load_id="b"), timeout=5)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert err.value.details() == "no bulk load " + "b" * 3986 + "…" and len(err.value.details()) == 4000


def test_sigterm_stops_a_service_gracefully(tmp_path):
    env = {
        "CHUNKLAB_DATA_DIR": str(tmp_path),
        "CHUNKLAB_EVALUATOR_ADDRESS": "127.0.0.1:0",
        "PATH": "/usr/bin:/bin",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.evaluator"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    assert "evaluator listening on 127.0.0.1:" in line
    address = line.rsplit(" ", 1)[-1].strip()
    health = health_pb2_grpc.HealthStub(channels.channel(address))
    assert health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == health_pb2.HealthCheckResponse.SERVING
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    assert time.monotonic() - started < 15
    assert "evaluator stopped" in process.stderr.read()
