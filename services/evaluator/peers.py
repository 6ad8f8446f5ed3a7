"""The evaluator's calls to the other services, over gRPC, each with a deadline.

The service logic sees only these methods, so it knows nothing of gRPC; a
failed call becomes a chunklab.errors error naming the peer.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc

from chunklab.errors import from_rpc_error
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, ingest_pb2, retriever_pb2


def retrieve_request(query: str, options: common_pb2.RetrievalOptions) -> retriever_pb2.RetrieveRequest:
    """What the evaluator asks the retriever for a question.

    Always exact search: experiment scores and the Query page's answers
    never depend on an approximate HNSW graph (ADR 0035)."""
    return retriever_pb2.RetrieveRequest(query=query, options=options, exact=True)


class GrpcPeers:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._ingest = channels.ingest(settings.ingest_address, settings)
        self._chunker = channels.chunker(settings.chunker_address, settings)
        self._retriever = channels.retriever(settings.retriever_address, settings)

    def get_document(self, document_id: str, full: bool = False) -> documents_pb2.Document:
        view = documents_pb2.DOCUMENT_VIEW_FULL if full else documents_pb2.DOCUMENT_VIEW_BASIC
        try:
            return self._ingest.GetDocument(
                ingest_pb2.GetDocumentRequest(document_id=document_id, view=view), timeout=self._settings.rpc_timeout_s
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "ingest") from None

    def list_documents(self) -> list[documents_pb2.Document]:
        documents: list[documents_pb2.Document] = []
        token = ""
        try:
            while True:
                page = self._ingest.ListDocuments(
                    ingest_pb2.ListDocumentsRequest(page_size=1000, page_token=token),
                    timeout=self._settings.rpc_timeout_s,
                )
                documents += page.documents
                token = page.next_page_token
                if not token:
                    return documents
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "ingest") from None

    def list_strategies(self) -> list[chunker_pb2.StrategyInfo]:
        return list(self._strategies().strategies)

    def chunker_llm(self) -> str:
        """The LLM the chunker's LLM strategies would call ("<model> at <base_url>"); empty when none."""
        return self._strategies().llm

    def _strategies(self) -> chunker_pb2.ListStrategiesResponse:
        try:
            return self._chunker.ListStrategies(
                chunker_pb2.ListStrategiesRequest(), timeout=self._settings.rpc_timeout_s
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "chunker") from None

    def process(
        self, document_id: str, spec: common_pb2.StrategySpec, embedding_model: str
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        """Indexes an experiment's own set, beside the active one (ADR 0038)."""
        request = chunker_pb2.ProcessDocumentRequest(
            document_id=document_id,
            strategies=[spec],
            embedding_model=embedding_model,
            activation=common_pb2.ACTIVATION_KEEP_CURRENT,
        )
        call = self._chunker.ProcessDocument(request, timeout=self._settings.long_rpc_timeout_s)
        try:
            yield from call
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "chunker") from None
        finally:
            call.cancel()  # a no-op once the stream ended; if it is closed early, the chunker stops too

    def retrieve(self, request: retriever_pb2.RetrieveRequest) -> retriever_pb2.RetrieveResponse:
        try:
            return self._retriever.Retrieve(request, timeout=self._settings.rpc_timeout_s)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "retriever") from None

    def indexed_set(
        self, embedding_model: str, document_id: str, strategy: str, config_id: str
    ) -> retriever_pb2.IndexedSet | None:
        """The document's index set of this configuration; None only when the retriever
        answers NOT_FOUND. Any other failure is raised (a retriever out of reach or too
        slow as Unavailable): it never passes for a set that is not there."""
        request = retriever_pb2.GetIndexedSetRequest(
            key=retriever_pb2.IndexedSetKey(
                embedding_model=embedding_model,
                document_id=document_id,
                strategy=strategy,
                config_id=config_id,
            )
        )
        try:
            return self._retriever.GetIndexedSet(request, timeout=self._settings.rpc_timeout_s)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise from_rpc_error(exc, "retriever") from None
