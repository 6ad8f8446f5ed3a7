"""Retriever logic: indexing, search, expansion, freshness. Knows nothing of gRPC.

The sweeper and cold storage live in services/retriever/lifecycle/sweeper.py.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from chunklab import ids, retrieval
from chunklab.embeddings import check_dimension
from chunklab.embeddings.base import EmbeddingProvider
from chunklab.errors import FailedPrecondition, InvalidArgument, NotFound
from chunklab.knobs import spec_to_dict
from chunklab.rpc import limits
from chunklab.timeutil import from_proto, to_proto, utcnow
from chunklab.v1 import common_pb2, retriever_pb2
from services.retriever.checks import check_index_set, check_retrieve, check_window_days
from services.retriever.index import conditions as c
from services.retriever.index.payloads import (
    ACTIVE,
    CHUNK_FIELD,
    LOOKUP_ONLY_ROLES,
    SET_STATE_FIELD,
    TIME_FIELD,
    IndexPoint,
    NoDirection,
    Sparse,
    chunk_to_payload,
    payload_to_chunk,
    unit_vector,
)
from services.retriever.index.registry import IndexRegistry
from services.retriever.index.vector_index import set_condition
from services.retriever.lifecycle.freshness import ExpiryWatch, FreshnessPolicy, decayed
from services.retriever.lifecycle.journal import Journal, Note
from services.retriever.search import coverage, expansion, lexical, ranking, rerank
from services.retriever.search.term_stats import CountsCache, TermCounts, weighted_query
from services.retriever.set_records import SetRecord, searched_of
from services.retriever.store import RetrieverStore, SetInfo

log = logging.getLogger("chunklab.retriever")

QUERY_CACHE_SIZE = 4096
# sentence_window's `window` knob when a document's spec does not say.
DEFAULT_WINDOW = 2
# Recency decay reorders this many candidates, so an older but more relevant
# chunk can still win: top_k × 10, at least 50.
DECAY_CANDIDATES = (10, 50)
# Each ranking that hybrid retrieval fuses is this deep.
HYBRID_DEPTH = 50
# Locks that documents' writes are spread over (one document, one lock).
DOCUMENT_LOCKS = 64
# Other replicas may change the freshness windows; re-read them this often.
WINDOWS_TTL_S = 5.0
# A configuration searched by id is marked used (for retention) at most this often.
TOUCH_EVERY_S = 60.0


class QueryCache:
    """Query embeddings by (model, text): a question asked again is not embedded again."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> list[float] | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple[str, str], value: list[float]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


class RetrieverService:
    def __init__(
        self,
        registry: IndexRegistry,
        store: RetrieverStore,
        default_model: str,
        provider_for: Callable[[str], EmbeddingProvider],
        default_windows: dict[str, int],
        clock: Callable[[], datetime] = utcnow,
        journal: Journal | None = None,
        rerankers: rerank.Rerankers | None = None,
    ) -> None:
        self.registry = registry
        self.rerankers = rerankers or rerank.Rerankers()
        self.store = store
        self.journal = journal or Journal(None)
        self._default_model = default_model
        self._provider_for = provider_for
        self._default_windows = dict(default_windows)
        self.clock = clock
        self._query_cache = QueryCache()
        self._policy: tuple[float, FreshnessPolicy] | None = None
        self._policy_lock = threading.Lock()
        self._expiry = ExpiryWatch()
        self._document_locks = [threading.Lock() for _ in range(DOCUMENT_LOCKS)]
        self._touched: dict[tuple[str, str, str], float] = {}
        self._term_counts = CountsCache()

    def close(self) -> None:
        self.registry.close()

    # -- freshness windows ---------------------------------------------------

    def policy(self) -> FreshnessPolicy:
        with self._policy_lock:
            now = time.monotonic()
            if self._policy is None or now - self._policy[0] > WINDOWS_TTL_S:
                self._policy = (now, FreshnessPolicy({**self._default_windows, **self.store.freshness_windows()}))
            return self._policy[1]

    def list_windows(self) -> retriever_pb2.ListFreshnessWindowsResponse:
        windows = self.policy().windows
        return retriever_pb2.ListFreshnessWindowsResponse(
            windows=[retriever_pb2.FreshnessWindow(collection=k, max_age_days=windows[k]) for k in sorted(windows)]
        )

    def update_window(self, window: retriever_pb2.FreshnessWindow) -> retriever_pb2.FreshnessWindow:
        if not window.collection:
            raise InvalidArgument("name the collection whose freshness window to set, e.g. news")
        limits.check_collection(window.collection)
        check_window_days(window.max_age_days)
        self.store.put_freshness_window(window.collection, window.max_age_days)
        with self._policy_lock:
            self._policy = None
        return retriever_pb2.FreshnessWindow(collection=window.collection, max_age_days=window.max_age_days)

    def as_of(self, stamp) -> datetime:
        return from_proto(stamp, None) or self.clock()

    # -- writes ----------------------------------------------------------------

    def index_chunks(
        self, header: retriever_pb2.IndexHeader, chunks: list[retriever_pb2.IndexedChunk]
    ) -> tuple[int, int, bool]:
        """Indexes one set; returns (chunks indexed, chunks of the set replaced,
        whether the set is now active)."""
        for field in ("document_id", "strategy", "config_id", "embedding_model"):
            if not getattr(header, field):
                raise InvalidArgument(f"the index header needs {field}")
        if header.dimension <= 0:
            raise InvalidArgument("the index header needs the vectors' dimension")
        # A model no service embeds with, or a dimension it does not give, would make an
        # index that no query can ever search.
        check_dimension(self._provider_for(header.embedding_model), header.dimension)
        if header.expansion not in common_pb2.ExpansionKind.values() or not header.expansion:
            raise InvalidArgument("the index header needs the strategy's expansion kind (StrategyInfo.expansion)")
        if header.activation not in common_pb2.Activation.values():
            raise InvalidArgument(f"the index header's activation {header.activation} is not an Activation")
        retrieval.check_config_id(header.config_id)
        check_index_set(header, chunks)  # the whole stream, before anything of the old set is touched
        make_active = header.activation != common_pb2.ACTIVATION_KEEP_CURRENT
        points, size = self._points(header, chunks, make_active)  # outside the lock: the costly part
        # No index is made for a set without points: nothing would ever be in it.
        index = self.registry.get(header.embedding_model, header.dimension, create=bool(points))
        first = chunks[0].chunk  # check_index_set: a set has at least one chunk
        with self.document_lock(header.document_id):
            current = self.store.indexed_set((header.embedding_model, header.document_id, header.strategy, ""))
            active = make_active or (current is not None and current["config_id"] == header.config_id)
            if active and not make_active:  # the active set indexed again by an experiment stays active
                for point in points:
                    point.payload[SET_STATE_FIELD] = ACTIVE
            with self.journaled(
                header.embedding_model, header.dimension, header.document_id, header.strategy, header.config_id
            ):
                replaced = (
                    0
                    if index is None
                    else index.replace(header.document_id, header.strategy, header.config_id, points, make_active)
                )
                self.store.record_set(
                    embedding_model=header.embedding_model,
                    document_id=header.document_id,
                    strategy=header.strategy,
                    config_id=header.config_id,
                    dimension=header.dimension,
                    spec=spec_to_dict(header.spec),
                    expansion=header.expansion,
                    document_name=first.document_name,
                    collection=first.collection,
                    published_ts=points[0].payload[TIME_FIELD] if points else 0.0,
                    points=len(points),
                    bytes=size,
                    active=active,
                    terms=TermCounts.of(p.sparse for p in points),
                    language=first.language,
                )
        if index is not None:
            index.maintain()
        return len(points), replaced, active

    @staticmethod
    def _points(
        header: retriever_pb2.IndexHeader, chunks: list[retriever_pb2.IndexedChunk], active: bool
    ) -> tuple[list[IndexPoint], int]:
        """The chunks as points, their vectors checked; and their approximate bytes."""
        points: list[IndexPoint] = []
        indexed_at = to_proto(utcnow())
        size = 0
        for item in chunks:
            chunk = item.chunk  # of the header's set, its id and index checked (check_index_set)
            role = chunk.role or common_pb2.CHUNK_ROLE_CHUNK
            searchable = role not in LOOKUP_ONLY_ROLES
            if searchable and len(item.vector) != header.dimension:
                raise InvalidArgument(
                    f"chunk {chunk.chunk_index} ({ids.role_name(role)}) has a vector of {len(item.vector)} "
                    f"dimensions, the header says {header.dimension}"
                    + ("; only parents are stored without a vector" if not item.vector else "")
                )
            chunk.role = role
            chunk.config_id = header.config_id
            chunk.embedding_model = header.embedding_model
            chunk.indexed_at.CopyFrom(indexed_at)
            payload = chunk_to_payload(chunk, active)
            dense = sparse = None
            if searchable:
                try:
                    dense = unit_vector(item.vector)
                except NoDirection as exc:
                    raise InvalidArgument(f"chunk {chunk.chunk_index}: {exc}") from None
                sparse = lexical.document_vector(
                    chunk.enriched_content if chunk.HasField("enriched_content") else chunk.content, chunk.language
                )
                size += 4 * header.dimension + 8 * len(sparse.indices)
            size += len(payload[CHUNK_FIELD]) + 160
            points.append(IndexPoint(chunk.chunk_id, payload, dense, sparse))
        return points, size

    @contextmanager
    def journaled(self, model: str, dimension: int, document_id: str, strategy: str, config_id: str) -> Iterator[None]:
        """A write to both the vector index and the records of one set (the caller holds the
        document's lock): noted before it starts, settled at once if it fails, and at the next
        start if the process dies midway (lifecycle/journal.py)."""
        note = self.journal.begin(
            "index",
            embedding_model=model,
            dimension=dimension,
            document_id=document_id,
            strategy=strategy,
            config_id=config_id,
        )
        try:
            yield
        except Exception:
            self._settle_after_failure(note)
            raise
        self.journal.end(note)

    def settle(self) -> int:
        """Settles the index writes a previous process did not finish (at start-up); returns how many."""
        notes = self.journal.pending("index")
        for note in notes:
            with self.document_lock(note.fields["document_id"]):
                self._settle_index(note)
            log.warning("settled an index write a stopped process left unfinished: %s", note.fields)
        return len(notes)

    def _settle_after_failure(self, note: Note) -> None:
        """Undoes what a failed index write left (the caller holds the document's
        lock); what cannot be undone now (its store failing too) is settled at the next start."""
        try:
            self._settle_index(note)
        except Exception as exc:  # the write's own failure is the one to report
            log.warning(
                "an index write of %s failed and could not be undone yet (%s); the next start settles it",
                note.fields,
                exc,
            )

    def _settle_index(self, note: Note) -> None:
        """A set whose record does not match its points (the record not written,
        or its points replaced only in part) loses both; then the document's
        active set in the index is the one its records name."""
        fields = note.fields
        model, document_id, strategy = fields["embedding_model"], fields["document_id"], fields["strategy"]
        index = self.registry.get(model, fields["dimension"])
        if index is not None:
            key = (model, document_id, strategy, fields["config_id"])
            recorded = self.store.indexed_set(key)
            if recorded is None or index.count(set_condition(*key[1:])) != recorded["points"]:
                index.delete_set(*key[1:])
                if recorded is not None:
                    self.store.delete_set(key)
            active = self.store.indexed_set((model, document_id, strategy, ""))
            if active is not None:
                index.activate(document_id, strategy, active["config_id"])
        self.journal.end(note)

    def delete_document(self, document_id: str, archived_chunks: Callable[[str], int] | None = None) -> int:
        if not document_id:
            raise InvalidArgument("document_id is empty")
        deleted = 0
        with self.document_lock(document_id):
            for _, _, index in self.registry.all():
                deleted += index.delete_document(document_id)
            self.store.delete_document(document_id)
        self._touched.clear()
        self.registry_maintain()
        if archived_chunks is not None:  # outside the document's lock: the sweeper takes its own lock first
            deleted += archived_chunks(document_id)
        return deleted

    def forget_config(self, model: str, strategy: str, config_id: str) -> None:
        """A configuration's sets changed: the next search by its id checks again."""
        self._touched.pop((model, strategy, config_id), None)

    def registry_maintain(self) -> None:
        for _, _, index in self.registry.all():
            index.maintain()

    def document_lock(self, document_id: str) -> threading.Lock:
        """Held while a document's points are written, deleted or archived: a
        sweep that archives a document and then deletes its points never
        deletes points that were indexed after it read them (in this process;
        replicas writing one Qdrant server do not share it)."""
        return self._document_locks[zlib.crc32(document_id.encode()) % len(self._document_locks)]

    # -- reads -----------------------------------------------------------------

    def _embed_query(self, provider: EmbeddingProvider, query: str) -> tuple[list[float], bool]:
        key = (getattr(provider, "cache_namespace", provider.name), query)
        cached = self._query_cache.get(key)
        if cached is not None:
            return cached, True
        vector = unit_vector(provider.embed_query(query))
        self._query_cache.put(key, vector)
        return vector, False

    def retrieve(self, request: retriever_pb2.RetrieveRequest) -> retriever_pb2.RetrieveResponse:
        started = time.perf_counter()
        query = check_retrieve(request)
        options = request.options
        top_k = retrieval.top_k(options)
        model = options.embedding_model or self._default_model
        provider = self._provider_for(model)  # an unknown model is INVALID_ARGUMENT, whatever is indexed
        dimensions = self.registry.dimensions(model)
        if not dimensions:
            raise FailedPrecondition(
                f"nothing is indexed with the embedding model {model!r} yet; process a document first"
            )
        if options.config_id:
            self._check_config(model, options.strategy, options.config_id)
        rerank_depth = retrieval.rerank_depth(options)
        # Before any search: a reranker that cannot be had fails the query at once.
        reranker = self.rerankers.get(options.rerank) if rerank_depth else None
        as_of_ts = self.as_of(request.as_of).timestamp()
        policy = self.policy()
        visible = policy.visible(as_of_ts)
        vector, cached = self._embed_query(provider, query)
        embedded = time.perf_counter()
        index = self.registry.get(model, len(vector))
        if index is None:
            raise FailedPrecondition(
                f"{model!r} now gives {len(vector)}-dimensional vectors but its chunks were indexed with "
                f"{', '.join(map(str, dimensions))}; re-process the documents"
            )
        if visible is not None and not self._expiry.holds_expired(index, policy, as_of_ts):
            # Nothing in the index is outside its window as of this query:
            # the window filter would only cost time (3x a search, measured).
            visible = None
        where = _where(options, visible)
        depth = max(top_k * DECAY_CANDIDATES[0], DECAY_CANDIDATES[1]) if options.recency_lambda > 0 else top_k
        # One read of the set records serves the BM25 statistics' sets and the coverage below.
        records = self.store.set_records(model, options.filter.document_ids)
        ranked = self._ranked(index, model, query, vector, where, max(depth, rerank_depth), as_of_ts, request, records)
        searched = time.perf_counter()
        rerank_scores: dict[str, float] = {}
        if reranker is not None:
            hits, rerank_scores = rerank.rerank(reranker, query, ranked[:rerank_depth], top_k)
        else:
            hits = [(payload_to_chunk(p), s) for p, s in ranked[:top_k]]
        reranked = time.perf_counter()
        flat, tree = self._expanded(index, model, options, visible, hits)
        rerank.stamp(flat, tree, rerank_scores)
        done = time.perf_counter()
        # The documents asked for that the strategy's sets do not cover (not part of expansion's time).
        missed = coverage.uncovered(records, options.strategy, options.config_id, options.filter)
        return retriever_pb2.RetrieveResponse(
            retrieved_chunks=flat,
            expansion_tree=tree,
            embedding_model=model,
            reranker=reranker.description if reranker is not None else "",
            uncovered_documents=missed,
            timings=retriever_pb2.RetrieveTimings(
                embed_ms=(embedded - started) * 1e3,
                search_ms=(searched - embedded) * 1e3,
                rerank_ms=(reranked - searched) * 1e3 if reranker is not None else 0.0,
                expand_ms=(done - reranked) * 1e3,
                total_ms=(done - started) * 1e3,
                query_embedding_cached=cached,
            ),
        )

    def _ranked(
        self,
        index,
        model: str,
        query: str,
        vector: list[float],
        where: c.Condition,
        depth: int,
        as_of_ts: float,
        request: retriever_pb2.RetrieveRequest,
        records: list[SetRecord],
    ) -> list[tuple[dict, float]]:
        """The candidates in ranking order: dense, fused with BM25 when hybrid,
        reordered by recency decay when it is asked for."""
        options = request.options
        dense = ranking.stable_top(
            lambda n: index.search(vector, where, n, request.exact),
            max(depth, HYBRID_DEPTH) if options.hybrid else depth,
        )
        ranked = dense
        if options.hybrid:
            terms = self._weighted_terms(
                index,
                model,
                options.strategy,
                options.config_id,
                where,
                lexical.query_vector(query, options.filter.languages),
                records,
            )
            ranked = lexical.reciprocal_rank_fusion(
                dense,
                ranking.stable_top(lambda n: index.search_lexical(terms, where, n), max(depth, HYBRID_DEPTH)),
                k=retrieval.fusion_k(options),
            )
        if options.recency_lambda > 0:
            ranked = ranking.ordered(
                [(p, decayed(s, p[TIME_FIELD], as_of_ts, options.recency_lambda)) for p, s in ranked]
            )
        return ranked

    def _expanded(
        self,
        index,
        model: str,
        options: common_pb2.RetrievalOptions,
        visible: c.Condition | None,
        hits: list[tuple[common_pb2.Chunk, float]],
    ):
        """The hits expanded as their sets' kind says: the flat list and the expansion tree."""

        def lookup(point_ids: list[str]) -> dict[str, common_pb2.Chunk]:
            return {
                pid: payload_to_chunk(p)
                for pid, p in index.get(point_ids).items()
                if c.evaluate(visible, p)  # what expansion pulls in obeys the window too
            }

        def set_info(chunk: common_pb2.Chunk) -> SetInfo:
            key = (model, chunk.document_id, chunk.strategy, chunk.config_id)
            return self.store.info(key) or SetInfo(common_pb2.EXPANSION_KIND_NONE, None)

        def window_for(chunk: common_pb2.Chunk) -> int:
            if options.HasField("window"):
                return options.window
            indexed_with = set_info(chunk).window
            return DEFAULT_WINDOW if indexed_with is None else indexed_with

        kind = set_info(hits[0][0]).expansion if hits else common_pb2.EXPANSION_KIND_NONE
        return expansion.expand(hits, kind, options.neighbor_prev, options.neighbor_next, lookup, window_for)

    def _weighted_terms(
        self, index, model: str, strategy: str, config_id: str, where: c.Condition, query: Sparse, records
    ) -> Sparse:
        """The query's terms weighted by their IDF over the sets `where` selects
        (term_stats.py) among the query's set records: each set is judged by its
        own fields, which every one of its points shares."""
        searched = [
            s for s in searched_of(records, strategy, config_id) if s["language"] is None or c.evaluate(where, s)
        ]
        counts: list[TermCounts] = []
        for found in searched:
            key = (model, found["document_id"], strategy, found["config_id"])
            cached = self._term_counts.get((key, found["indexed_at"]))
            if cached is None:
                cached = self.store.term_counts([key]).get(key)
                if cached is None:  # a set recorded before sets had statistics
                    cached, found["language"] = self._count_terms(index, key)
                    if not c.evaluate(where, found):
                        continue
                self._term_counts.put((key, found["indexed_at"]), cached)
            counts.append(cached)
        return weighted_query(query, counts)

    def _count_terms(self, index, key) -> tuple[TermCounts, str]:
        """Reads a set's sparse vectors back to record its statistics (once)."""
        _, document_id, strategy, config_id = key
        points = list(index.scroll(set_condition(document_id, strategy, config_id), with_vectors=True))
        counts = TermCounts.of((p.sparse or Sparse((), ())) if p.dense is not None else None for p in points)
        language = points[0].payload.get("language", "") if points else ""
        self.store.record_terms(key, counts, language)
        return counts, language

    def _check_config(self, model: str, strategy: str, config_id: str) -> None:
        """NOT_FOUND unless some document has the configuration; marks it used
        (at most every TOUCH_EVERY_S), which keeps it from retention."""
        key = (model, strategy, config_id)
        now = time.monotonic()
        last = self._touched.get(key)
        if last is not None and now - last < TOUCH_EVERY_S:
            return
        if not self.store.has_config(model, strategy, config_id):
            raise NotFound(
                f"no document has a {strategy} index set with configuration {config_id} for {model}; "
                "the Documents page lists each document’s index sets"
            )
        self.store.touch(model, strategy, config_id)
        self._touched[key] = now

    def stats(self, archive_stats: tuple[int, int] = (0, 0)) -> retriever_pb2.GetIndexStatsResponse:
        indexes = self.registry.all()
        return retriever_pb2.GetIndexStatsResponse(
            rows=[
                retriever_pb2.IndexStatsRow(
                    embedding_model=r.embedding_model,
                    strategy=r.strategy,
                    collection=r.collection,
                    points=r.points,
                    documents=r.documents,
                    bytes=r.bytes,
                )
                for r in self.store.stats()
            ],
            total_points=sum(index.count() for _, _, index in indexes),
            disk_bytes=sum(index.disk_bytes() for _, _, index in indexes),
            archived_documents=archive_stats[0],
            archive_bytes=archive_stats[1],
            backend=self.registry.backend,
            indexes=[_index_info(model, index) for _, model, index in indexes],
        )


def _where(options: common_pb2.RetrievalOptions, visible: c.Condition | None) -> c.All:
    """What a candidate must be: of the strategy, of the configuration asked
    for (or active), inside the request's filter and the freshness windows."""
    flt = options.filter
    return c.All(
        must=tuple(
            x
            for x in (
                c.match("strategy", options.strategy),
                c.match("config_id", options.config_id) if options.config_id else c.match(SET_STATE_FIELD, ACTIVE),
                c.match("document_id", *flt.document_ids) if flt.document_ids else None,
                c.match("collection", *flt.collections) if flt.collections else None,
                c.match("language", *flt.languages) if flt.languages else None,
                visible,
            )
            if x is not None
        )
    )


def _index_info(model: str, index) -> retriever_pb2.VectorIndexInfo:
    info = retriever_pb2.VectorIndexInfo(
        embedding_model=model,
        dimension=index.dimension,
        points=index.count(),
        graph_current=index.graph_current,
    )
    built_at = index.graph_built_at()
    if built_at is not None:
        info.graph_built_at.CopyFrom(to_proto(datetime.fromtimestamp(built_at, tz=UTC)))
    return info
