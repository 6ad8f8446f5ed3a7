"""The token check and TLS on real gRPC servers in this process, port 0 on
loopback (ADR 0048): every kind of call is refused without the token or with
a wrong one, in a sentence a person can act on; health and reflection stay
open; the client library sends the token and trusts the CA it is given."""

from __future__ import annotations

from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from chunklab.client import ChunkLab, ClientError
from chunklab.rpc import channels, security
from chunklab.rpc.server import CHANNEL_OPTIONS, ErrorMappingInterceptor
from chunklab.v1 import chunker_pb2, chunker_pb2_grpc, documents_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.certificates import make_certificates
from tests.support.fake_stubs import settings as base_settings

TOKEN = "s3cret-token-of-the-stack-0123456789"
SERVICES = ["chunklab.v1.ChunkerService", "chunklab.v1.IngestService"]


class Chunker(chunker_pb2_grpc.ChunkerServiceServicer):
    def ListStrategies(self, request, context):  # unary -> unary
        return chunker_pb2.ListStrategiesResponse(strategies=[chunker_pb2.StrategyInfo(name="fixed_size")])

    def ProcessDocument(self, request, context):  # unary -> stream
        yield chunker_pb2.ProcessDocumentEvent(
            result=chunker_pb2.ProcessDocumentResult(document_id=request.document_id)
        )


class Ingest(ingest_pb2_grpc.IngestServiceServicer):
    def CreateDocument(self, request_iterator, context):  # stream -> unary
        header, *pieces = list(request_iterator)
        size = sum(len(p.data) for p in pieces)
        return ingest_pb2.CreateDocumentResponse(
            document=documents_pb2.Document(name=header.header.name, size_bytes=size)
        )


def start_server(settings) -> tuple[grpc.Server, str]:
    """A server protected as chunklab.rpc.server.serve protects one, with health and reflection."""
    server = grpc.server(
        futures.ThreadPoolExecutor(4),
        interceptors=[*security.server_interceptors(settings), ErrorMappingInterceptor()],
        options=CHANNEL_OPTIONS,
    )
    chunker_pb2_grpc.add_ChunkerServiceServicer_to_server(Chunker(), server)
    ingest_pb2_grpc.add_IngestServiceServicer_to_server(Ingest(), server)
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    reflection.enable_server_reflection([*SERVICES, "grpc.health.v1.Health", reflection.SERVICE_NAME], server)
    port = security.add_port(server, "127.0.0.1:0", settings)
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def protected():
    """A server that wants TOKEN, over plain gRPC."""
    server, address = start_server(base_settings().model_copy(update={"auth_token": TOKEN}))
    yield address
    server.stop(0)


def with_token(token: str):
    return base_settings().model_copy(update={"auth_token": token})


def calls(address: str, settings) -> dict:
    """One call of each kind (unary, server stream, client stream), each returning what a user would check."""
    chunker = channels.chunker(address, settings)
    ingest = channels.ingest(address, settings)
    upload = [
        ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(name="a.md")),
        ingest_pb2.CreateDocumentRequest(data=b"hello"),
    ]

    def unary():
        return [s.name for s in chunker.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=5).strategies]

    def server_stream():
        events = chunker.ProcessDocument(chunker_pb2.ProcessDocumentRequest(document_id="doc-1"), timeout=5)
        return [e.result.document_id for e in events]

    def client_stream():
        document = ingest.CreateDocument(iter(upload), timeout=5).document
        return document.name, document.size_bytes

    return {"unary": unary, "server stream": server_stream, "client stream": client_stream}


EXPECTED = {"unary": ["fixed_size"], "server stream": ["doc-1"], "client stream": ("a.md", 5)}


def refusal(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code(), err.value.details()


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_without_a_token_every_kind_of_call_is_unauthenticated_with_what_to_set(protected, kind):
    call = calls(protected, base_settings())[kind]
    assert refusal(call) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "This ChunkLab stack needs a token: set CHUNKLAB_AUTH_TOKEN to the stack's token.",
    )


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_a_wrong_token_is_unauthenticated(protected, kind):
    for wrong in ("not-the-token-but-long-enough", TOKEN + "x", TOKEN[:-1]):
        code, details = refusal(calls(protected, with_token(wrong))[kind])
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert details == security.WRONG_TOKEN
        assert details.startswith("The token sent is not this ChunkLab stack's: set CHUNKLAB_AUTH_TOKEN")


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_the_right_token_gets_the_answer(protected, kind):
    assert calls(protected, with_token(TOKEN))[kind]() == EXPECTED[kind]


@pytest.mark.parametrize("sent", [f"Basic {TOKEN}", TOKEN, f"Bearer {TOKEN} extra"])
def test_the_token_counts_only_as_a_bearer_token(protected, sent):
    stub = chunker_pb2_grpc.ChunkerServiceStub(grpc.insecure_channel(protected))
    code, details = refusal(
        lambda: stub.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=5, metadata=[("authorization", sent)])
    )
    assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, security.WRONG_TOKEN)
    reply = stub.ListStrategies(
        chunker_pb2.ListStrategiesRequest(), timeout=5, metadata=[("authorization", f"bearer {TOKEN}")]
    )  # the scheme is case-blind
    assert [s.name for s in reply.strategies] == ["fixed_size"]


def test_health_and_reflection_answer_without_a_token(protected):
    channel = grpc.insecure_channel(protected)
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    services = ProtoReflectionDescriptorDatabase(channel).get_services()
    assert set(services) == {*SERVICES, "grpc.health.v1.Health", reflection.SERVICE_NAME}


def test_the_client_library_sends_the_token_and_says_what_to_do_without_it(protected):
    lab = ChunkLab.at({"chunker": protected}, with_token(TOKEN))
    assert [s.name for s in lab.list_strategies()] == ["fixed_size"]
    with pytest.raises(ClientError) as caught:
        ChunkLab.at({"chunker": protected}, base_settings()).list_strategies()
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert caught.value.message == (
        f"The chunker service at {protected} refused the call. "
        "This ChunkLab stack needs a token: set CHUNKLAB_AUTH_TOKEN to the stack's token."
    )


def test_an_unprotected_server_ignores_a_token():
    server, address = start_server(base_settings())
    try:
        assert calls(address, with_token(TOKEN))["unary"]() == ["fixed_size"]
        assert calls(address, base_settings())["unary"]() == ["fixed_size"]
    finally:
        server.stop(0)


# -- TLS ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A server with TLS and a token, and the certificates it was made with."""
    folder = tmp_path_factory.mktemp("tls")
    certificates = make_certificates(folder / "good")
    settings = base_settings().model_copy(
        update={"auth_token": TOKEN, "tls_cert": str(certificates.cert), "tls_key": str(certificates.key)}
    )
    server, address = start_server(settings)
    yield address, certificates, make_certificates(folder / "other", ca_name="Some other CA")
    server.stop(0)


def test_over_tls_a_client_that_trusts_the_ca_and_has_the_token_gets_the_answer(tls):
    address, certificates, _ = tls
    trusting = base_settings().model_copy(update={"auth_token": TOKEN, "tls_ca": str(certificates.ca)})
    for kind, call in calls(address, trusting).items():
        assert call() == EXPECTED[kind]
    lab = ChunkLab.at({name: address for name in ("ingest", "chunker", "retriever", "evaluator")}, trusting)
    assert {h.status for h in lab.service_health()} == {"SERVING"}  # health over TLS too
    code, details = refusal(calls(address, trusting.model_copy(update={"auth_token": ""}))["unary"])
    assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, security.NO_TOKEN)


def test_over_tls_a_plaintext_client_or_one_trusting_another_ca_never_gets_through(tls):
    address, _, other = tls
    plaintext = with_token(TOKEN)
    untrusting = plaintext.model_copy(update={"tls_ca": str(other.ca)})
    for settings in (plaintext, untrusting):
        code, _ = refusal(calls(address, settings)["unary"])
        assert code == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    ("host", "token", "warned"),
    [
        ("127.0.0.1", "", False),
        ("localhost", "", False),
        ("[::1]", "", False),
        ("127.0.0.2", "", False),
        ("0.0.0.0", "", True),
        ("[::]", "", True),
        ("10.1.2.3", "", True),
        ("ingest", "", True),
        ("0.0.0.0", TOKEN, False),
    ],
)
def test_binding_beyond_loopback_without_a_token_is_warned_about(host, token, warned):
    warning = security.exposure_warning("ingest", host, with_token(token))
    assert bool(warning) == warned
    if warned:
        assert warning == (
            f"WARNING: chunklab ingest listens on {host}, beyond loopback, without a token: anyone who can "
            "reach it can call it. Set CHUNKLAB_AUTH_TOKEN (and CHUNKLAB_TLS_CERT/KEY) to protect it."
        )
