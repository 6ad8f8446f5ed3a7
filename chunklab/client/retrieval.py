"""Calls to the retriever: search, its limits, index sets, freshness and the archive."""

from __future__ import annotations

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.client.core import Calls
from chunklab.client.errors import ClientError
from chunklab.v1 import common_pb2, retriever_pb2


class RetrievalCalls(Calls):
    def retrieve(
        self, query: str, options: common_pb2.RetrievalOptions, as_of: Timestamp | None = None, exact: bool = False
    ) -> retriever_pb2.RetrieveResponse:
        """Top-k search in a strategy's active sets (or options.config_id's), expanded as the set declares."""
        request = retriever_pb2.RetrieveRequest(query=query, options=options, exact=exact)
        if as_of is not None:
            request.as_of.CopyFrom(as_of)
        return self._call("retriever", "Retrieve", request)

    def retrieval_limits(self) -> common_pb2.RetrievalLimits:
        """The bounds Retrieve enforces on RetrievalOptions, for building inputs."""
        return self._call("retriever", "GetRetrievalLimits", retriever_pb2.GetRetrievalLimitsRequest())

    def index_stats(self) -> retriever_pb2.GetIndexStatsResponse:
        return self._call("retriever", "GetIndexStats", retriever_pb2.GetIndexStatsRequest())

    # -- index sets (ADR 0038) ----------------------------------------------------

    def _set_key(
        self, document_id: str, strategy: str, config_id: str, embedding_model: str
    ) -> retriever_pb2.IndexedSetKey:
        return retriever_pb2.IndexedSetKey(
            embedding_model=embedding_model or self.settings.embedding_model,
            document_id=document_id,
            strategy=strategy,
            config_id=config_id,
        )

    def indexed_set(
        self, document_id: str, strategy: str, embedding_model: str = "", config_id: str = ""
    ) -> retriever_pb2.IndexedSet | None:
        """A document's index set of the strategy (the active one unless config_id names
        another; the configured model by default); None if there is none."""
        request = retriever_pb2.GetIndexedSetRequest(
            key=self._set_key(document_id, strategy, config_id, embedding_model)
        )
        try:
            return self._call("retriever", "GetIndexedSet", request)
        except ClientError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    def list_indexed_sets(
        self, strategy: str = "", document_id: str = "", embedding_model: str = ""
    ) -> list[retriever_pb2.IndexedSet]:
        """Every index set of the strategy (and document; empty: all) of the model
        (default: the configured one), newest first per document."""
        request = retriever_pb2.ListIndexedSetsRequest(
            embedding_model=embedding_model or self.settings.embedding_model,
            strategy=strategy,
            document_id=document_id,
        )
        return self._every_page("retriever", "ListIndexedSets", request, "sets")

    def indexed_chunks(
        self, document_id: str, strategy: str, config_id: str = "", embedding_model: str = ""
    ) -> list[common_pb2.Chunk]:
        """Every chunk of one index set (the active one unless config_id names
        another), all pages followed: by role, then chunk_index."""
        request = retriever_pb2.ListIndexedChunksRequest(
            key=self._set_key(document_id, strategy, config_id, embedding_model)
        )
        return self._every_page("retriever", "ListIndexedChunks", request, "chunks")

    def activate_indexed_set(
        self, document_id: str, strategy: str, config_id: str, embedding_model: str = ""
    ) -> retriever_pb2.IndexedSet:
        """Queries without a config_id search this set from now on."""
        key = self._set_key(document_id, strategy, config_id, embedding_model)
        return self._call("retriever", "ActivateIndexedSet", retriever_pb2.ActivateIndexedSetRequest(key=key))

    def pin_indexed_set(
        self, document_id: str, strategy: str, config_id: str, pinned: bool = True, embedding_model: str = ""
    ) -> retriever_pb2.IndexedSet:
        """A pinned set is never dropped by retention; pinned=False unpins it."""
        key = self._set_key(document_id, strategy, config_id, embedding_model)
        request = retriever_pb2.PinIndexedSetRequest(key=key, pinned=pinned)
        return self._call("retriever", "PinIndexedSet", request)

    def delete_indexed_set(self, document_id: str, strategy: str, config_id: str, embedding_model: str = "") -> int:
        """Deletes one set's chunks; returns how many left the index."""
        key = self._set_key(document_id, strategy, config_id, embedding_model)
        request = retriever_pb2.DeleteIndexedSetRequest(key=key)
        return self._call("retriever", "DeleteIndexedSet", request).chunks_deleted

    # -- freshness and the archive ---------------------------------------------------

    def list_freshness_windows(self) -> list[retriever_pb2.FreshnessWindow]:
        return list(
            self._call("retriever", "ListFreshnessWindows", retriever_pb2.ListFreshnessWindowsRequest()).windows
        )

    def update_freshness_window(self, collection: str, max_age_days: int) -> retriever_pb2.FreshnessWindow:
        window = retriever_pb2.FreshnessWindow(collection=collection, max_age_days=max_age_days)
        return self._call(
            "retriever", "UpdateFreshnessWindow", retriever_pb2.UpdateFreshnessWindowRequest(window=window)
        )

    def sweep(self, dry_run: bool, as_of: Timestamp | None = None) -> retriever_pb2.SweepResponse:
        """Archives expired documents (or, with dry_run, lists what would go); moving data takes the long deadline."""
        request = retriever_pb2.SweepRequest(dry_run=dry_run)
        if as_of is not None:
            request.as_of.CopyFrom(as_of)
        return self._call("retriever", "Sweep", request, long=True)

    def list_archived_documents(self) -> list[retriever_pb2.SweptDocument]:
        request = retriever_pb2.ListArchivedDocumentsRequest()
        return self._every_page("retriever", "ListArchivedDocuments", request, "documents")

    def restore_document(self, document_id: str) -> retriever_pb2.RestoreDocumentResponse:
        request = retriever_pb2.RestoreDocumentRequest(document_id=document_id)
        return self._call("retriever", "RestoreDocument", request, long=True)
