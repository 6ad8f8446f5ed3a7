"""Processing: chunk a stored document with each strategy, embed, index.

Each strategy succeeds or fails on its own; a failed strategy stores
nothing. Knows nothing of gRPC: the document comes from `fetch_document`
and chunks go to `index_chunks`, both given by the server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from chunklab.embeddings import EmbeddingProvider
from chunklab.errors import InvalidArgument, ServiceError
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, retriever_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, Strategy
from services.chunker.strategies.base import knob_value, offline_context

log = logging.getLogger("chunklab.chunker")

EMBED_BATCH = 64

FetchDocument = Callable[[str], documents_pb2.Document]
IndexChunks = Callable[[retriever_pb2.IndexHeader, list[retriever_pb2.IndexedChunk]], tuple[int, int]]


def build_strategies(specs: list[common_pb2.StrategySpec]) -> list[Strategy]:
    """Validates every spec before any work starts."""
    if not specs:
        raise InvalidArgument(f"name at least one strategy; available: {', '.join(REGISTRY.names())}")
    names = [spec.name for spec in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidArgument(f"each strategy may appear once per request; repeated: {', '.join(repeated)}")
    return [REGISTRY.build(spec) for spec in specs]


class ChunkerService:
    def __init__(
        self,
        fetch_document: FetchDocument,
        index_chunks: IndexChunks,
        provider_for: Callable[[str], EmbeddingProvider],
        default_model: str,
    ) -> None:
        self._fetch_document = fetch_document
        self._index_chunks = index_chunks
        self._provider_for = provider_for
        self._default_model = default_model

    def preview(self, document_id: str, spec: common_pb2.StrategySpec) -> chunker_pb2.PreviewChunksResponse:
        (strategy,) = build_strategies([spec])
        source = SourceDocument(self._fetch_document(document_id))
        provider = self._provider_for(self._default_model)
        context = offline_context(provider.embed_documents)
        return chunker_pb2.PreviewChunksResponse(chunks=strategy.chunk(source, context), config_id=strategy.config_id)

    def process(
        self, document_id: str, specs: list[common_pb2.StrategySpec], embedding_model: str
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        strategies = build_strategies(specs)
        provider = self._provider_for(embedding_model or self._default_model)
        source = SourceDocument(self._fetch_document(document_id))
        result = chunker_pb2.ProcessDocumentResult(document_id=document_id, embedding_model=provider.name)
        for strategy in strategies:
            started = time.perf_counter()
            yield _progress(strategy.name, chunker_pb2.STRATEGY_PHASE_STARTED, 0.0, "chunking")
            try:
                outcome = yield from self._run(strategy, source, provider, started)
            except ServiceError as exc:
                reason = exc.message
            except Exception as exc:  # noqa: BLE001 - one strategy's failure must not stop the others
                log.exception("strategy %s failed on %s", strategy.name, document_id)
                reason = f"{type(exc).__name__}: {exc}"
            else:
                result.strategies_completed.append(outcome)
                yield _progress(
                    strategy.name, chunker_pb2.STRATEGY_PHASE_COMPLETED, 1.0,
                    f"{outcome.chunk_count} chunks indexed",
                    chunk_count=outcome.chunk_count, seconds=outcome.seconds,
                )
                continue
            result.strategies_failed.add(strategy=strategy.name, reason=reason)
            yield _progress(
                strategy.name, chunker_pb2.STRATEGY_PHASE_FAILED, 1.0, "failed",
                error=reason, seconds=time.perf_counter() - started,
            )
        yield chunker_pb2.ProcessDocumentEvent(result=result)

    def _run(self, strategy: Strategy, source: SourceDocument, provider: EmbeddingProvider, started: float):
        chunks = strategy.chunk(source, offline_context(provider.embed_documents))
        if not chunks:
            raise InvalidArgument(f"{strategy.name} made no chunks of this document")
        texts = [c.enriched_content if c.HasField("enriched_content") else c.content for c in chunks]
        indexed: list[retriever_pb2.IndexedChunk] = []
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start : start + EMBED_BATCH]
            vectors = provider.embed_documents(texts[start : start + EMBED_BATCH])
            indexed += [
                retriever_pb2.IndexedChunk(chunk=chunk, vector=vector.tolist()) for chunk, vector in zip(batch, vectors)
            ]
            done = len(indexed)
            yield _progress(
                strategy.name, chunker_pb2.STRATEGY_PHASE_RUNNING, 0.95 * done / len(chunks),
                f"embedded {done}/{len(chunks)} chunks",
            )
        header = retriever_pb2.IndexHeader(
            document_id=source.document.document_id,
            strategy=strategy.name,
            config_id=strategy.config_id,
            embedding_model=provider.name,
            dimension=provider.dimension,
            spec=common_pb2.StrategySpec(
                name=strategy.name,
                knobs={k.name: knob_value(strategy.values[k.name]) for k in strategy.knobs},
            ),
        )
        self._index_chunks(header, indexed)
        return chunker_pb2.StrategyOutcome(
            strategy=strategy.name,
            config_id=strategy.config_id,
            chunk_count=len(chunks),
            seconds=time.perf_counter() - started,
        )


def _progress(strategy: str, phase: int, fraction: float, message: str, **extra) -> chunker_pb2.ProcessDocumentEvent:
    return chunker_pb2.ProcessDocumentEvent(
        progress=chunker_pb2.StrategyProgress(
            strategy=strategy, phase=phase, fraction_done=fraction, message=message, **extra
        )
    )
