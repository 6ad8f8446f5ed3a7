"""The retriever service's gRPC wiring: `python -m services.retriever`."""

from __future__ import annotations

from chunklab.embeddings import get_provider, warm_up_in_background
from chunklab.errors import InvalidArgument, Unimplemented
from chunklab.server import configure_logging, serve
from chunklab.settings import load_settings
from chunklab.v1 import retriever_pb2, retriever_pb2_grpc
from services.retriever.service import RetrieverService

_LATER = "arrives with issue 5 (freshness windows, the sweeper and cold storage)"


class RetrieverServicer(retriever_pb2_grpc.RetrieverServiceServicer):
    def __init__(self, service: RetrieverService) -> None:
        self._service = service

    def IndexChunks(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidArgument("an IndexChunks stream starts with a header message")
        chunks = []
        for message in request_iterator:
            if message.WhichOneof("part") != "batch":
                raise InvalidArgument("only the first message of an IndexChunks stream may be a header")
            chunks.extend(message.batch.chunks)
        indexed, replaced = self._service.index_chunks(first.header, chunks)
        return retriever_pb2.IndexChunksResponse(chunks_indexed=indexed, chunks_replaced=replaced)

    def DeleteDocumentChunks(self, request, context):
        return retriever_pb2.DeleteDocumentChunksResponse(
            chunks_deleted=self._service.delete_document(request.document_id)
        )

    def Retrieve(self, request, context):
        return self._service.retrieve(request)

    def GetIndexStats(self, request, context):
        return self._service.stats()

    def ListFreshnessWindows(self, request, context):
        raise Unimplemented(f"ListFreshnessWindows {_LATER}")

    def UpdateFreshnessWindow(self, request, context):
        raise Unimplemented(f"UpdateFreshnessWindow {_LATER}")

    def Sweep(self, request, context):
        raise Unimplemented(f"Sweep {_LATER}")

    def ListArchivedDocuments(self, request, context):
        raise Unimplemented(f"ListArchivedDocuments {_LATER}")

    def RestoreDocument(self, request, context):
        raise Unimplemented(f"RestoreDocument {_LATER}")


def main() -> None:
    configure_logging()
    settings = load_settings()
    warm_up_in_background(settings.embedding_model)
    service = RetrieverService(settings.data_dir / "index", settings.embedding_model, get_provider)
    servicer = RetrieverServicer(service)
    serve(
        "retriever",
        settings.retriever_address,
        lambda server: retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(servicer, server),
        [retriever_pb2.DESCRIPTOR.services_by_name["RetrieverService"].full_name],
        workers=settings.grpc_workers,
        grace_s=settings.shutdown_grace_s,
        on_stop=service.close,
    )
