"""The front end's only door to the services: plain calls over the gRPC stubs.

Nothing here knows Gradio, so anything the UI does a script could do with the
same calls. Every call carries a deadline from the settings, and a failed call
becomes a `GatewayError` whose message a person can read (the status code's
name and the service's own words) instead of a gRPC traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chunklab import clients
from chunklab.settings import Settings
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, ingest_pb2, retriever_pb2

# The contract's limit for one data message of an upload.
UPLOAD_PIECE_BYTES = 1024 * 1024
SERVICES = ("ingest", "chunker", "retriever", "evaluator")
# Status codes that mean "the peer is not there (in time)" rather than "you asked wrongly".
_UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class GatewayError(Exception):
    """A call that failed, told in words a person can act on."""

    def __init__(self, message: str, *, service: str = "", code: grpc.StatusCode | None = None):
        super().__init__(message)
        self.message = message
        self.service = service
        self.code = code

    @classmethod
    def from_rpc_error(cls, service: str, address: str, exc: grpc.RpcError) -> GatewayError:
        code = exc.code() if hasattr(exc, "code") else None
        details = (exc.details() if hasattr(exc, "details") else "") or "no details given"
        name = code.name if code is not None else "UNKNOWN"
        if code in _UNREACHABLE:
            message = f"The {service} service at {address} is unreachable or too slow ({name}): {details}"
        else:
            message = f"{service} service: {name}: {details}"
        return cls(message, service=service, code=code)


@dataclass(frozen=True)
class ServiceHealth:
    """One row of the health page."""

    service: str
    address: str
    status: str  # SERVING, NOT_SERVING, ... or UNREACHABLE
    detail: str = ""


@dataclass
class Gateway:
    """The four services' stubs with the deadlines from one Settings object.

    Channels open lazily on first use: building a Gateway does no I/O.
    """

    settings: Settings
    _stubs: dict[str, Any] = field(default_factory=dict, repr=False)

    def address(self, service: str) -> str:
        return getattr(self.settings, f"{service}_address")

    def _stub(self, service: str) -> Any:
        if service not in self._stubs:
            self._stubs[service] = getattr(clients, service)(self.address(service))
        return self._stubs[service]

    @contextmanager
    def _calling(self, service: str) -> Iterator[None]:
        try:
            yield
        except grpc.RpcError as exc:
            raise GatewayError.from_rpc_error(service, self.address(service), exc) from None

    # -- ingest ---------------------------------------------------------------

    def list_documents(self, collection: str = "") -> list[documents_pb2.Document]:
        """Every document, all pages followed, in the order the service lists them."""
        documents: list[documents_pb2.Document] = []
        token = ""
        with self._calling("ingest"):
            while True:
                page = self._stub("ingest").ListDocuments(
                    ingest_pb2.ListDocumentsRequest(page_size=1000, page_token=token, collection=collection),
                    timeout=self.settings.rpc_timeout_s,
                )
                documents.extend(page.documents)
                token = page.next_page_token
                if not token:
                    return documents

    def upload_document(self, path: str, collection: str = "", name: str = "") -> ingest_pb2.CreateDocumentResponse:
        """Streams a file to CreateDocument: the header, then pieces of at most 1 MiB."""
        name = name or os.path.basename(path)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise GatewayError(f"cannot read the uploaded file {name!r}: {exc.strerror}") from None
        header = ingest_pb2.UploadHeader(name=name, collection=collection.strip(), size_bytes=size)
        with self._calling("ingest"):
            return self._stub("ingest").CreateDocument(
                _upload_messages(header, path), timeout=self.settings.rpc_timeout_s
            )

    def delete_document(self, document_id: str) -> int:
        """Deletes a document and its chunks; returns how many chunks left the index."""
        with self._calling("ingest"):
            response = self._stub("ingest").DeleteDocument(
                ingest_pb2.DeleteDocumentRequest(document_id=document_id), timeout=self.settings.rpc_timeout_s
            )
        return response.chunks_deleted

    # -- chunker --------------------------------------------------------------

    def list_strategies(self) -> list[chunker_pb2.StrategyInfo]:
        with self._calling("chunker"):
            response = self._stub("chunker").ListStrategies(
                chunker_pb2.ListStrategiesRequest(), timeout=self.settings.rpc_timeout_s
            )
        return list(response.strategies)

    def process_document(
        self, document_id: str, strategies: Iterable[common_pb2.StrategySpec]
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        """Yields ProcessDocument's progress events; the last one holds the result."""
        request = chunker_pb2.ProcessDocumentRequest(document_id=document_id, strategies=list(strategies))
        with self._calling("chunker"):
            yield from self._stub("chunker").ProcessDocument(request, timeout=self.settings.long_rpc_timeout_s)

    # -- retriever ------------------------------------------------------------

    def retrieve(self, request: retriever_pb2.RetrieveRequest) -> retriever_pb2.RetrieveResponse:
        with self._calling("retriever"):
            return self._stub("retriever").Retrieve(request, timeout=self.settings.rpc_timeout_s)

    # -- health ---------------------------------------------------------------

    def service_health(self) -> list[ServiceHealth]:
        """Each service's standard grpc.health.v1 answer for the whole server."""
        rows = []
        for service in SERVICES:
            address = self.address(service)
            # A fresh channel each time: a cached one could report a server
            # that has gone away as still connected for a while.
            with clients.channel(address) as channel:
                try:
                    reply = health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=""), timeout=min(self.settings.rpc_timeout_s, 5.0)
                    )
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                    rows.append(ServiceHealth(service, address, status))
                except grpc.RpcError as exc:
                    rows.append(ServiceHealth(service, address, "UNREACHABLE", f"{exc.code().name}: {exc.details()}"))
        return rows


def _upload_messages(header: ingest_pb2.UploadHeader, path: str) -> Iterator[ingest_pb2.CreateDocumentRequest]:
    yield ingest_pb2.CreateDocumentRequest(header=header)
    with open(path, "rb") as file:
        while piece := file.read(UPLOAD_PIECE_BYTES):
            yield ingest_pb2.CreateDocumentRequest(data=piece)
