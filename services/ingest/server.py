"""The ingest service's gRPC wiring: `python -m services.ingest`."""

from __future__ import annotations

import threading

from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import InvalidArgument
from chunklab.rpc import limits, tracing
from chunklab.rpc.server import configure_logging, serve
from chunklab.settings import Settings, load_settings
from chunklab.timeutil import from_proto
from chunklab.v1 import ingest_pb2, ingest_pb2_grpc
from services.ingest.peers import GrpcPeers
from services.ingest.readers.language import detect as detect_language
from services.ingest.service import IngestService
from services.ingest.store import Base


@limits.bounded(ingest_pb2.DESCRIPTOR.services_by_name["IngestService"])
class IngestServicer(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(self, service: IngestService) -> None:
        self._service = service

    def CreateDocument(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidArgument("an upload starts with a header message (name, format, collection)")
        header = first.header

        def pieces():
            for message in request_iterator:
                if message.WhichOneof("part") != "data":
                    raise InvalidArgument("only the first message of an upload may be a header")
                yield message.data

        document, existed = self._service.create(
            header.name,
            header.format,
            header.collection,
            header.language,
            from_proto(header.published_at) if header.HasField("published_at") else None,
            header.size_bytes,
            pieces(),
        )
        return ingest_pb2.CreateDocumentResponse(document=document, already_existed=existed)

    def GetDocument(self, request, context):
        return self._service.get(request.document_id, request.view)

    def ListDocuments(self, request, context):
        documents, next_token, total = self._service.list(
            request.page_size, request.page_token, request.collection, request.language
        )
        return ingest_pb2.ListDocumentsResponse(documents=documents, next_page_token=next_token, total_size=total)

    def DeleteDocument(self, request, context):
        return ingest_pb2.DeleteDocumentResponse(chunks_deleted=self._service.delete(request.document_id))


def build_service(settings: Settings) -> IngestService:
    return IngestService(
        make_sessionmaker(settings.database_url_for("ingest"), Base, settings.db_busy_timeout_s),
        int(settings.max_upload_mb * 1_000_000),
        GrpcPeers(settings).delete_chunks,
    )


def main() -> None:
    configure_logging()
    settings = load_settings()
    tracing.start("ingest", settings)  # before any channel or server is made
    # Load the language model off the request path: the first upload should not pay for it.
    threading.Thread(target=detect_language, args=("warm-up",), name="language-warm-up", daemon=True).start()
    servicer = IngestServicer(build_service(settings))
    serve(
        "ingest",
        settings.ingest_address,
        lambda server: ingest_pb2_grpc.add_IngestServiceServicer_to_server(servicer, server),
        [ingest_pb2.DESCRIPTOR.services_by_name["IngestService"].full_name],
        settings=settings,
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
    )
