"""The chunker's calls to the other services, over gRPC, each with a deadline:
documents from ingest, chunks to the retriever.

The service logic sees only these methods, so it knows nothing of gRPC; a
failed call becomes a chunklab.errors error naming the peer.
"""

from __future__ import annotations

import grpc

from chunklab.errors import from_rpc_error
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.v1 import documents_pb2, ingest_pb2, retriever_pb2

# Chunks per IndexChunks message after the header.
INDEX_BATCH = 256


class GrpcPeers:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._ingest = channels.ingest(settings.ingest_address, settings)
        self._retriever = channels.retriever(settings.retriever_address, settings)

    def get_document(
        self, document_id: str, view: documents_pb2.DocumentView = documents_pb2.DOCUMENT_VIEW_FULL
    ) -> documents_pb2.Document:
        try:
            return self._ingest.GetDocument(
                ingest_pb2.GetDocumentRequest(document_id=document_id, view=view), timeout=self._settings.rpc_timeout_s
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "ingest") from None

    def check_document(self, document_id: str) -> None:
        """Raises NotFound (or UNAVAILABLE) unless ingest holds the document."""
        self.get_document(document_id, documents_pb2.DOCUMENT_VIEW_BASIC)

    def index_chunks(
        self, header: retriever_pb2.IndexHeader, chunks: list[retriever_pb2.IndexedChunk]
    ) -> tuple[int, int]:
        """Streams one index set to the retriever; returns (chunks indexed, chunks replaced)."""

        def messages():
            yield retriever_pb2.IndexChunksRequest(header=header)
            for start in range(0, len(chunks), INDEX_BATCH):
                batch = retriever_pb2.IndexChunkBatch(chunks=chunks[start : start + INDEX_BATCH])
                yield retriever_pb2.IndexChunksRequest(batch=batch)

        try:
            response = self._retriever.IndexChunks(messages(), timeout=self._settings.long_rpc_timeout_s)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "retriever") from None
        return response.chunks_indexed, response.chunks_replaced
