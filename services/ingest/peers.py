"""The ingest service's calls to the other services, over gRPC, each with a
deadline: a deleted document's chunks leave the retriever.

The service logic sees only these methods, so it knows nothing of gRPC; a
failed call becomes a chunklab.errors error naming the peer.
"""

from __future__ import annotations

import grpc

from chunklab.errors import from_rpc_error
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.v1 import retriever_pb2


class GrpcPeers:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._retriever = channels.retriever(settings.retriever_address, settings)

    def delete_chunks(self, document_id: str) -> int:
        """Deletes the document's chunks from the index and from cold storage; returns how many."""
        try:
            response = self._retriever.DeleteDocumentChunks(
                retriever_pb2.DeleteDocumentChunksRequest(document_id=document_id),
                timeout=self._settings.rpc_timeout_s,
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "retriever") from None
        return response.chunks_deleted
