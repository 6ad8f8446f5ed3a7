"""Calls to the chunker: strategies, previews, processing and bulk loads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from chunklab.client.core import Calls
from chunklab.client.errors import ClientError
from chunklab.v1 import chunker_pb2, common_pb2


class ChunkingCalls(Calls):
    def strategy_catalog(self) -> chunker_pb2.ListStrategiesResponse:
        """Strategies with their knobs, and the embedding models the chunker can use."""
        return self._call("chunker", "ListStrategies", chunker_pb2.ListStrategiesRequest())

    def list_strategies(self) -> list[chunker_pb2.StrategyInfo]:
        return list(self.strategy_catalog().strategies)

    def preview_chunks(
        self, document_id: str, strategy: common_pb2.StrategySpec, embedding_model: str = ""
    ) -> chunker_pb2.PreviewChunksResponse:
        """Chunks a document with one strategy without indexing (may embed or call an LLM: long deadline)."""
        request = chunker_pb2.PreviewChunksRequest(
            document_id=document_id, strategy=strategy, embedding_model=embedding_model
        )
        return self._call("chunker", "PreviewChunks", request, long=True)

    def process_document(
        self,
        document_id: str,
        strategies: Iterable[common_pb2.StrategySpec],
        embedding_model: str = "",
        activation: int = common_pb2.ACTIVATION_MAKE_ACTIVE,
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        """Yields ProcessDocument's progress events; the last one holds the result.
        Each configuration processed becomes the active one of its strategy, unless
        activation is ACTIVATION_KEEP_CURRENT (indexed beside the active set)."""
        request = chunker_pb2.ProcessDocumentRequest(
            document_id=document_id, strategies=list(strategies), embedding_model=embedding_model, activation=activation
        )
        return self._stream("chunker", "ProcessDocument", request)

    def process(
        self, document_id: str, strategies: Iterable[common_pb2.StrategySpec], embedding_model: str = ""
    ) -> chunker_pb2.ProcessDocumentResult:
        """Processes a document and returns the result (strategies completed and
        failed) once the stream ends."""
        result = None
        for event in self.process_document(document_id, strategies, embedding_model):
            if event.HasField("result"):
                result = event.result
        if result is None:
            raise ClientError(
                "The chunker ended the processing stream without a result; see its log.", service="chunker"
            )
        return result

    def submit_bulk_load(
        self, document_ids: Iterable[str], strategies: Iterable[common_pb2.StrategySpec], embedding_model: str = ""
    ) -> chunker_pb2.BulkLoad:
        """Queues one job per document on the chunker's message broker; returns at once."""
        request = chunker_pb2.SubmitBulkLoadRequest(
            document_ids=list(document_ids), strategies=list(strategies), embedding_model=embedding_model
        )
        return self._call("chunker", "SubmitBulkLoad", request)

    def get_bulk_load(self, bulk_load_id: str) -> chunker_pb2.BulkLoad:
        return self._call("chunker", "GetBulkLoad", chunker_pb2.GetBulkLoadRequest(bulk_load_id=bulk_load_id))

    def cancel_bulk_load(self, bulk_load_id: str) -> chunker_pb2.BulkLoad:
        """Jobs not started are not run; those running finish."""
        return self._call("chunker", "CancelBulkLoad", chunker_pb2.CancelBulkLoadRequest(bulk_load_id=bulk_load_id))

    def list_bulk_loads(self) -> list[chunker_pb2.BulkLoad]:
        """The most recent bulk loads, newest first, as summaries."""
        return list(self._call("chunker", "ListBulkLoads", chunker_pb2.ListBulkLoadsRequest()).bulk_loads)

    def follow_bulk_load(
        self, bulk_load_id: str, timeout: float | None = None, interval_s: float = 0.5
    ) -> Iterator[chunker_pb2.BulkLoad]:
        """Yields the bulk load as it goes, polled every interval_s, until every
        job has finished or `timeout` seconds (default: the long deadline) have
        passed; the last one yielded is the outcome so far."""
        return self._polled(
            lambda: self.get_bulk_load(bulk_load_id),
            lambda load: len(load.results) >= load.jobs_total,
            timeout,
            interval_s,
        )
