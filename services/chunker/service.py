"""Processing: chunk a stored document with each strategy, embed, index.

Each strategy succeeds or fails on its own, and a failed strategy stores
nothing: its chunks are all embedded before the first one is sent, and the
retriever swaps a (document, strategy)'s chunks only when the whole stream
has arrived. Knows nothing of gRPC: the document comes from
`fetch_document` and chunks go to `index_chunks`, both given by the server
(services/chunker/peers.py, over gRPC).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

from chunklab import knobs
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.errors import Cancelled, FailedPrecondition, InvalidArgument, ServiceError, Unavailable
from chunklab.llm import ChatEndpoint, LLMError
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, retriever_pb2
from services.chunker.cache import EmbeddingCache
from services.chunker.failures import reported
from services.chunker.llm import NO_LLM, LLMPool
from services.chunker.run import Progress, StrategyRun, progress_event, run_in_thread
from services.chunker.strategies import REGISTRY, SourceDocument, Strategy
from services.chunker.strategies.base import NoLLM

log = logging.getLogger("chunklab.chunker")

FetchDocument = Callable[[str], documents_pb2.Document]
IndexChunks = Callable[[retriever_pb2.IndexHeader, list[retriever_pb2.IndexedChunk]], tuple[int, int]]

# Share of a run's progress bar taken by chunking: most of it for strategies
# that call an LLM or embed to chunk, little for the rest; embedding takes
# the rest up to INDEXING, indexing the last step.
HEAVY_CHUNKING = 0.5
LIGHT_CHUNKING = 0.05
INDEXING = 0.95


def build_strategies(specs: list[common_pb2.StrategySpec]) -> list[Strategy]:
    """Validates every spec before any work starts."""
    if not specs:
        raise InvalidArgument(f"name at least one strategy; available: {', '.join(REGISTRY.names())}")
    names = [spec.name for spec in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidArgument(f"each strategy may appear once per request; repeated: {', '.join(repeated)}")
    return [REGISTRY.build(spec) for spec in specs]


def embedded_text(chunk: common_pb2.Chunk) -> str:
    """What a chunk's vector stands for: the enriched text where a strategy wrote one."""
    return chunk.enriched_content if chunk.HasField("enriched_content") else chunk.content


class ChunkerService:
    def __init__(
        self,
        fetch_document: FetchDocument,
        index_chunks: IndexChunks,
        provider_for: Callable[[str], EmbeddingProvider],
        default_model: str,
        cache: EmbeddingCache,
        llm: LLMPool,
    ) -> None:
        self._fetch_document = fetch_document
        self._index_chunks = index_chunks
        self._provider_for = provider_for
        self._default_model = default_model
        self._cache = cache
        self._llm = llm

    def describe_llm(self) -> str:
        return self._llm.describe_default()

    def close(self) -> None:
        self._cache.close()

    # -- preview -----------------------------------------------------------

    def preview(
        self, request: chunker_pb2.PreviewChunksRequest, cancelled: threading.Event | None = None
    ) -> chunker_pb2.PreviewChunksResponse:
        """One strategy's chunks of a stored document, nothing indexed; `cancelled`
        (the call ended) stops a long LLM or embedding phase at its next step."""
        cancelled = cancelled or threading.Event()
        (strategy,) = build_strategies([request.strategy])
        provider = self._provider_for(request.embedding_model or self._default_model)
        endpoint = self._llm.resolve(request.llm if request.HasField("llm") else None)
        if strategy.requires_llm and not endpoint.configured:
            raise FailedPrecondition(f"{strategy.name} needs an LLM to chunk, and {NO_LLM}")
        source = SourceDocument(self._fetch_document(request.document_id))
        run = StrategyRun(
            provider, self._cache, self._llm, endpoint, Progress(strategy.name, lambda _: None, cancelled), cancelled
        )
        try:
            chunks = strategy.chunks_of(source, run.context(lambda fraction, message: None))
        except NoLLM as exc:
            raise FailedPrecondition(f"{strategy.name} needs an LLM to chunk, and {exc}") from None
        except LLMError as exc:
            raise Unavailable(f"{strategy.name} could not chunk: {exc}") from None
        return chunker_pb2.PreviewChunksResponse(
            chunks=chunks, config_id=strategy.config_id, usage=run.usage.to_proto()
        )

    # -- processing --------------------------------------------------------

    def check(self, request: chunker_pb2.ProcessDocumentRequest) -> None:
        """What `process` refuses before it fetches the document: the
        strategies and their knobs, the embedding model, the LLM choice."""
        self._prepare(request)

    def _prepare(
        self, request: chunker_pb2.ProcessDocumentRequest
    ) -> tuple[list[Strategy], EmbeddingProvider, ChatEndpoint]:
        strategies = build_strategies(list(request.strategies))
        provider = self._provider_for(request.embedding_model or self._default_model)
        endpoint = self._llm.resolve(request.llm if request.HasField("llm") else None)
        return strategies, provider, endpoint

    def process(
        self, request: chunker_pb2.ProcessDocumentRequest, cancelled: threading.Event | None = None
    ) -> Iterator[chunker_pb2.ProcessDocumentEvent]:
        cancelled = cancelled or threading.Event()
        strategies, provider, endpoint = self._prepare(request)
        source = SourceDocument(self._fetch_document(request.document_id))
        result = chunker_pb2.ProcessDocumentResult(document_id=request.document_id, embedding_model=provider.name)
        if any(s.requires_llm for s in strategies) and endpoint.configured:
            result.llm = endpoint.describe()
        for strategy in strategies:
            if cancelled.is_set():
                return
            started = time.perf_counter()
            yield progress_event(strategy.name, chunker_pb2.STRATEGY_PHASE_STARTED, 0.0, "chunking")
            try:
                outcome = yield from run_in_thread(
                    lambda emit, s=strategy, started=started: self._run(
                        s, source, provider, endpoint, request.activation, emit, cancelled, started
                    ),
                    f"chunker-{strategy.name}",
                    cancelled,
                    document_id=request.document_id,
                    strategy=strategy.name,
                    config_id=strategy.config_id,
                )
            except Cancelled:
                return
            except (NoLLM, LLMError) as exc:
                reason = str(exc)
            except ServiceError as exc:
                reason = exc.message
            except Exception:  # one strategy's failure must not stop the others
                reason = reported(log, f"{strategy.name} failed on document {request.document_id}")
            else:
                result.strategies_completed.append(outcome)
                yield progress_event(
                    strategy.name,
                    chunker_pb2.STRATEGY_PHASE_COMPLETED,
                    1.0,
                    f"{outcome.chunk_count} chunks indexed ({outcome.embeddings_cached} embeddings from the cache)",
                    chunk_count=outcome.chunk_count,
                    seconds=outcome.seconds,
                    embeddings_cached=outcome.embeddings_cached,
                    usage=outcome.usage,
                )
                continue
            result.strategies_failed.add(strategy=strategy.name, reason=reason)
            yield progress_event(
                strategy.name,
                chunker_pb2.STRATEGY_PHASE_FAILED,
                1.0,
                f"failed: {reason}",
                error=reason,
                seconds=time.perf_counter() - started,
            )
        yield chunker_pb2.ProcessDocumentEvent(result=result)

    def _run(
        self,
        strategy: Strategy,
        source: SourceDocument,
        provider: EmbeddingProvider,
        endpoint: ChatEndpoint,
        activation: int,
        emit: Callable,
        cancelled: threading.Event,
        started: float,
    ) -> chunker_pb2.StrategyOutcome:
        if strategy.requires_llm and not endpoint.configured:
            raise NoLLM(NO_LLM)
        progress = Progress(strategy.name, emit, cancelled)
        run = StrategyRun(provider, self._cache, self._llm, endpoint, progress, cancelled)
        heavy = strategy.requires_llm or strategy.requires_embeddings_to_chunk
        chunked = HEAVY_CHUNKING if heavy else LIGHT_CHUNKING
        context = run.context(progress.span(0.0, chunked))
        chunks = strategy.chunks_of(source, context)
        if not chunks:
            raise InvalidArgument(f"{strategy.name} made no chunks of this document (is it empty?)")

        # Parents are stored for lookup by id only: they get no vector.
        searchable = [chunk for chunk in chunks if chunk.role != common_pb2.CHUNK_ROLE_PARENT]
        embedding = progress.span(chunked, INDEXING)
        progress.set(chunked, f"embedding {len(searchable)} chunks", force=True)
        chunked_at = time.perf_counter()
        embedded_while_chunking = run.embed_seconds  # the strategy's own calls (semantic's pieces)
        # Chunks whose vector the strategy already made (pooled from its pieces) are not embedded again.
        to_embed = [chunk for chunk in searchable if chunk.chunk_id not in context.vectors]
        embedded = run.embed(
            [embedded_text(chunk) for chunk in to_embed],
            lambda done, total: embedding(done / total, f"embedded {done}/{total} chunks"),
        )
        vectors = {id(chunk): row for chunk, row in zip(to_embed, embedded.vectors)}
        vectors.update((id(chunk), context.vectors[chunk.chunk_id]) for chunk in searchable if id(chunk) not in vectors)
        dimension = provider.dimension if not vectors else len(next(iter(vectors.values())))

        progress.set(INDEXING, f"indexing {len(chunks)} chunks", force=True)
        indexing_at = time.perf_counter()
        indexed = []
        for chunk in chunks:
            chunk.embedding_model = provider.name
            row = vectors.get(id(chunk))
            indexed.append(retriever_pb2.IndexedChunk(chunk=chunk, vector=[] if row is None else row.tolist()))
        header = retriever_pb2.IndexHeader(
            document_id=source.document.document_id,
            strategy=strategy.name,
            config_id=strategy.config_id,
            embedding_model=provider.name,
            dimension=dimension,
            spec=knobs.to_spec(strategy.name, strategy.values),
            expansion=strategy.expansion,
            activation=activation,
            chunk_count=len(indexed),
        )
        if cancelled.is_set():
            raise Cancelled()
        self._index_chunks(header, indexed)
        ended = time.perf_counter()
        # Chunking is what came before the final embedding call, less the embedding calls
        # the strategy itself made while it chunked.
        phases = common_pb2.ProcessingPhases(
            chunk_seconds=max(0.0, chunked_at - started - embedded_while_chunking),
            embed_seconds=run.embed_seconds,
            index_seconds=ended - indexing_at,
        )
        return chunker_pb2.StrategyOutcome(
            strategy=strategy.name,
            config_id=strategy.config_id,
            chunk_count=len(chunks),
            seconds=ended - started,
            phases=phases,
            embeddings_cached=embedded.cached,
            usage=run.usage.to_proto(),
        )
