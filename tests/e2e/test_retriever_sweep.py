"""The sweeper: dry run, archive to cold storage, restore byte-identical,
through both index backends (Qdrant Edge and qdrant-client local mode), and
the Sweep / ListArchivedDocuments / RestoreDocument RPCs of a real process."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import grpc
import numpy as np
import pytest
from qdrant_client import QdrantClient

from chunklab import ids
from chunklab.errors import AlreadyExists, InvalidArgument, NotFound
from chunklab.rpc import channels
from chunklab.timeutil import to_proto
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab_app.stack import Stack, wait_serving
from services.chunker.strategies import REGISTRY
from services.retriever.index import conditions as c
from services.retriever.index.registry import IndexRegistry
from services.retriever.lifecycle.archive import ColdStorage
from services.retriever.lifecycle.sweeper import Sweeper
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore
from tests.support.databases import database_without_rows

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WINDOWS = {"news": 7, "hr": 90, "policies": 0, "default": 0}


class FakeProvider:
    def __init__(self, name: str, dimension: int) -> None:
        self.name, self.dimension = name, dimension

    def known_dimension(self) -> int:
        return self.dimension

    def embed_query(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        vector[0] = 1.0
        return vector


PROVIDERS = {"fake-4": FakeProvider("fake-4", 4), "fake-6": FakeProvider("fake-6", 6)}


def provider_for(name: str):
    if name not in PROVIDERS:
        raise InvalidArgument(f"unknown embedding model {name!r}")
    return PROVIDERS[name]


# Each vector backend with the retriever's records on SQLite; qdrant-client's (the
# quicker) also on PostgreSQL, the same store code on the other database it supports.
@pytest.fixture(
    params=[("edge", "sqlite"), ("qdrant-client", "sqlite"), ("qdrant-client", "postgresql")],
    ids=["edge", "qdrant-client", "qdrant-client-postgresql"],
)
def kit(request, tmp_path):
    backend, database = request.param
    with database_without_rows(request, database, tmp_path) as url:
        yield from _kit(url, backend, tmp_path)


def _kit(url: str, backend: str, tmp_path):
    store = RetrieverStore(url)
    client = QdrantClient(":memory:") if backend == "qdrant-client" else None
    service = RetrieverService(
        IndexRegistry(tmp_path / "edge", store, client), store, "fake-4", provider_for, WINDOWS, clock=lambda: NOW
    )
    sweeper = Sweeper(service, ColdStorage(tmp_path / "archive"))
    yield service, sweeper
    sweeper.stop()
    service.close()


def index(
    service,
    doc: str,
    strategy: str,
    model: str,
    count: int,
    collection: str,
    age_days: float,
    parents: int = 0,
    config: str = "cfg",
    activation: int = pb.ACTIVATION_UNSPECIFIED,
) -> None:
    dim = PROVIDERS[model].dimension
    rng = np.random.default_rng(abs(hash((doc, strategy, model))) % 2**32)
    items = []
    for i in range(count):
        role = pb.CHUNK_ROLE_CHILD if parents else pb.CHUNK_ROLE_CHUNK
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id(doc, strategy, config, i, role),
            document_id=doc,
            document_name=f"{doc}.md",
            strategy=strategy,
            chunk_index=i,
            role=role,
            content=f"{doc} {strategy} text {i}",
            collection=collection,
            language="en",
            published_at=to_proto(NOW - timedelta(days=age_days)),
        )
        if parents:
            chunk.parent_id = ids.chunk_id(doc, strategy, config, i % parents, pb.CHUNK_ROLE_PARENT)
        items.append(rpb.IndexedChunk(chunk=chunk, vector=rng.standard_normal(dim).tolist()))
    for p in range(parents):
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id(doc, strategy, config, p, pb.CHUNK_ROLE_PARENT),
            document_id=doc,
            strategy=strategy,
            chunk_index=p,
            role=pb.CHUNK_ROLE_PARENT,
            content=f"{doc} parent {p}",
            collection=collection,
            published_at=to_proto(NOW - timedelta(days=age_days)),
        )
        items.append(rpb.IndexedChunk(chunk=chunk))
    header = rpb.IndexHeader(
        document_id=doc,
        strategy=strategy,
        config_id=config,
        embedding_model=model,
        dimension=dim,
        spec=pb.StrategySpec(name=strategy),
        expansion=REGISTRY.get(strategy).expansion,
        activation=activation,
    )
    service.index_chunks(header, items)


def snapshot(service, doc: str) -> dict:
    """Every point of a document in every index: payload and vector bytes."""
    found = {}
    for name, _, idx in service.registry.all():
        for p in idx.scroll(c.match("document_id", doc), with_vectors=True):
            dense = np.asarray(p.dense, dtype="<f4").tobytes() if p.dense is not None else None
            sparse = (p.sparse.indices, np.asarray(p.sparse.values, dtype="<f4").tobytes()) if p.sparse else None
            found[(name, p.point_id)] = (json.dumps(p.payload, sort_keys=True), dense, sparse)
    return found


def fill(service) -> None:
    index(service, "old-news", "fixed_size", "fake-4", 5, "news", 10)
    index(service, "old-news", "parent_child", "fake-4", 4, "news", 10, parents=2)
    index(service, "old-news", "fixed_size", "fake-6", 3, "news", 10)
    index(service, "new-news", "fixed_size", "fake-4", 3, "news", 1)
    index(service, "old-policy", "fixed_size", "fake-4", 3, "policies", 900)


def count_all(service) -> int:
    return sum(idx.count() for _, _, idx in service.registry.all())


def test_dry_run_lists_what_would_go_and_changes_nothing(kit):
    service, sweeper = kit
    fill(service)
    before, total = snapshot(service, "old-news"), count_all(service)
    response = sweeper.sweep(NOW, dry_run=True)
    assert response.dry_run
    assert [(d.document_id, d.document_name, d.collection, d.chunks) for d in response.documents] == [
        ("old-news", "old-news.md", "news", 5 + 6 + 3)
    ]
    assert response.chunks_archived == 14
    assert count_all(service) == total and snapshot(service, "old-news") == before
    assert not sweeper.list_archived(0, "").documents


def test_sweep_archives_and_restore_brings_back_chunks_and_vectors_byte_identical(kit):
    service, sweeper = kit
    fill(service)
    index(
        service, "old-news", "fixed_size", "fake-4", 2, "news", 10, config="cfg2", activation=pb.ACTIVATION_KEEP_CURRENT
    )  # a second configuration beside the active one
    service.store.set_flags(("fake-4", "old-news", "fixed_size", "cfg2"), pinned=True)

    def flags() -> list[tuple]:
        return sorted(
            (s["embedding_model"], s["strategy"], s["config_id"], s["active"], s["pinned"], s["points"])
            for s in service.store.list_sets(document_id="old-news")
        )

    sets_before = flags()
    assert ("fake-4", "fixed_size", "cfg", True, False, 5) in sets_before
    assert ("fake-4", "fixed_size", "cfg2", False, True, 2) in sets_before
    before = snapshot(service, "old-news")
    assert len(before) == 16  # two strategies, two configurations, two embedding models, parents included
    total = count_all(service)

    swept = sweeper.sweep(NOW, dry_run=False)
    assert [d.document_id for d in swept.documents] == ["old-news"] and swept.chunks_archived == 16
    assert snapshot(service, "old-news") == {} and count_all(service) == total - 16
    assert flags() == []  # archived sets are not listed
    assert snapshot(service, "new-news") and snapshot(service, "old-policy")  # in their windows: kept
    assert [d.document_id for d in sweeper.list_archived(0, "").documents] == ["old-news"]
    assert sweeper.archive_stats()[0] == 1
    stats_rows = {(r.strategy, r.collection, r.embedding_model) for r in service.stats().rows}
    assert ("parent_child", "news", "fake-4") not in stats_rows
    assert not sweeper.sweep(NOW, dry_run=False).documents  # nothing left to sweep

    restored = sweeper.restore("old-news")
    assert restored.chunks_restored == 16
    assert restored.outside_freshness_window  # still older than the news window
    assert snapshot(service, "old-news") == before
    assert flags() == sets_before  # every set back, active and pinned as they were
    assert not sweeper.list_archived(0, "").documents
    with pytest.raises(NotFound):
        sweeper.restore("old-news")


def test_a_failed_archive_write_deletes_nothing(kit, monkeypatch):
    service, sweeper = kit
    fill(service)
    before = snapshot(service, "old-news")

    def broken(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(sweeper.storage, "write", broken)
    with pytest.raises(OSError):
        sweeper.sweep(NOW, dry_run=False)
    assert snapshot(service, "old-news") == before
    assert not list(sweeper.storage.folder.iterdir())


def test_chunks_indexed_while_a_sweep_archives_their_document_are_not_deleted_unarchived(kit, monkeypatch):
    """A strategy's chunks arrive while the sweep is writing the document's archive: they are
    either in that archive or still in the index afterwards, never deleted without a copy."""
    service, sweeper = kit
    fill(service)
    write = sweeper.storage.write
    arrivals: list[threading.Thread] = []

    def write_while_indexing(header, records):
        arrival = threading.Thread(target=index, args=(service, "old-news", "recursive", "fake-4", 2, "news", 10))
        arrival.start()
        arrival.join(timeout=0.5)  # it waits for the sweep of its document to finish
        arrivals.append(arrival)
        write(header, records)

    monkeypatch.setattr(sweeper.storage, "write", write_while_indexing)
    swept = sweeper.sweep(NOW, dry_run=False)
    arrivals[0].join(timeout=30)
    assert swept.chunks_archived == 14
    archived = {record["id"] for record in sweeper.storage.read("old-news")[1]}
    indexed = set(point_id for _, point_id in snapshot(service, "old-news"))
    arrived = {ids.chunk_id("old-news", "recursive", "cfg", i) for i in range(2)}
    assert arrived <= archived | indexed
    assert indexed == arrived  # the sweep removed what it archived, and only that


def test_sweeps_restores_deletes_and_indexing_of_one_document_at_once_never_deadlock_or_lose_points(kit):
    """Every path that takes a document's lock, from several threads at once, for a while."""
    service, sweeper = kit
    fill(service)
    others = {doc: snapshot(service, doc) for doc in ("new-news", "old-policy")}
    errors: list[BaseException] = []

    def repeat(action) -> None:
        for _ in range(8):
            try:
                action()
            except (AlreadyExists, NotFound):
                pass  # a restore with nothing archived, or with the document indexed again: refused, fine
            except BaseException as exc:  # reported below
                errors.append(exc)

    actions = [
        lambda: index(service, "old-news", "fixed_size", "fake-4", 3, "news", 10),
        lambda: sweeper.sweep(NOW, dry_run=False),
        lambda: sweeper.restore("old-news"),
        lambda: service.delete_document("old-news", archived_chunks=sweeper.forget),
        lambda: service.retrieve(
            rpb.RetrieveRequest(
                query="q", options=pb.RetrievalOptions(strategy="fixed_size", top_k=3), as_of=to_proto(NOW)
            )
        ),
    ]
    threads = [threading.Thread(target=repeat, args=(action,)) for action in actions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a deadlock"
    assert not errors, errors
    # The other documents were never touched, and the one fought over can still be deleted cleanly.
    assert {doc: snapshot(service, doc) for doc in others} == others
    service.delete_document("old-news", archived_chunks=sweeper.forget)
    assert snapshot(service, "old-news") == {} and sweeper.storage.read("old-news") is None


def test_restore_refuses_a_document_that_was_indexed_again_and_delete_forgets_the_archive(kit):
    service, sweeper = kit
    fill(service)
    sweeper.sweep(NOW, dry_run=False)
    index(service, "old-news", "fixed_size", "fake-4", 2, "news", 0)  # re-processed since
    with pytest.raises(AlreadyExists):
        sweeper.restore("old-news")
    deleted = service.delete_document("old-news", archived_chunks=sweeper.forget)
    assert deleted == 2 + 14  # the indexed chunks and the archived ones
    assert not sweeper.list_archived(0, "").documents


def test_archive_pages(kit):
    service, sweeper = kit
    for n in range(5):
        index(service, f"doc-{n}", "fixed_size", "fake-4", 1, "news", 30)
    sweeper.sweep(NOW, dry_run=False)
    first = sweeper.list_archived(2, "")
    second = sweeper.list_archived(2, first.next_page_token)
    third = sweeper.list_archived(2, second.next_page_token)
    assert [d.document_id for p in (first, second, third) for d in p.documents] == [f"doc-{n}" for n in range(5)]
    assert third.next_page_token == ""


def test_the_periodic_task_sweeps_on_its_own_and_zero_means_never(kit):
    service, sweeper = kit
    fill(service)
    sweeper.start(0)
    assert not sweeper._periodic.running
    sweeper.start(0.1)
    deadline = time.monotonic() + 20
    while not sweeper.list_archived(0, "").documents and time.monotonic() < deadline:
        time.sleep(0.05)
    sweeper.stop()
    assert [d.document_id for d in sweeper.list_archived(0, "").documents] == ["old-news"]


# -- through gRPC, and persisted across a restart --------------------------------


def start(data_dir) -> Stack:
    stack = Stack(
        data_dir=data_dir,
        extra_env={"CHUNKLAB_SWEEP_INTERVAL_S": "0", "CHUNKLAB_FRESHNESS_WINDOWS": json.dumps(WINDOWS)},
    )
    stack.addresses["retriever"] = f"{stack.host}:0"
    stack.addresses["retriever"] = stack._spawn("retriever", "services.retriever", stack.env(), "listening on", 120)
    wait_serving(stack.addresses["retriever"], 120)
    return stack


def test_sweep_rpcs_and_windows_survive_a_restart(tmp_path):
    stack = start(tmp_path)
    try:
        stub = channels.retriever(stack.addresses["retriever"])
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id("d", "fixed_size", "cfg", 0),
            document_id="d",
            document_name="d.md",
            strategy="fixed_size",
            chunk_index=0,
            content="a chat line",
            collection="chat",
            published_at=to_proto(NOW - timedelta(days=3)),
        )
        header = rpb.IndexHeader(
            document_id="d",
            strategy="fixed_size",
            config_id="cfg",
            embedding_model="all-MiniLM-L6-v2",
            dimension=384,
            expansion=pb.EXPANSION_KIND_NEIGHBORS,
        )
        stub.IndexChunks(
            iter(
                [
                    rpb.IndexChunksRequest(header=header),
                    rpb.IndexChunksRequest(
                        batch=rpb.IndexChunkBatch(chunks=[rpb.IndexedChunk(chunk=chunk, vector=[1.0] * 384)])
                    ),
                ]
            ),
            timeout=30,
        )
        stub.UpdateFreshnessWindow(
            rpb.UpdateFreshnessWindowRequest(window=rpb.FreshnessWindow(collection="chat", max_age_days=2)), timeout=10
        )
        dry = stub.Sweep(rpb.SweepRequest(dry_run=True, as_of=to_proto(NOW)), timeout=30)
        assert [d.document_id for d in dry.documents] == ["d"] and dry.dry_run
        assert stub.GetIndexStats(rpb.GetIndexStatsRequest(), timeout=10).total_points == 1
        done = stub.Sweep(rpb.SweepRequest(as_of=to_proto(NOW)), timeout=30)
        assert done.chunks_archived == 1
        stats = stub.GetIndexStats(rpb.GetIndexStatsRequest(), timeout=10)
        assert (stats.total_points, stats.archived_documents) == (0, 1)
    finally:
        stack.stop()

    stack = start(tmp_path)  # the same data folder: windows and archive are still there
    try:
        stub = channels.retriever(stack.addresses["retriever"])
        windows = stub.ListFreshnessWindows(rpb.ListFreshnessWindowsRequest(), timeout=10).windows
        assert {w.collection: w.max_age_days for w in windows}["chat"] == 2
        listed = stub.ListArchivedDocuments(rpb.ListArchivedDocumentsRequest(), timeout=10)
        assert [(d.document_id, d.collection, d.chunks) for d in listed.documents] == [("d", "chat", 1)]
        restored = stub.RestoreDocument(rpb.RestoreDocumentRequest(document_id="d"), timeout=30)
        assert restored.chunks_restored == 1 and restored.outside_freshness_window
        with pytest.raises(grpc.RpcError) as err:
            stub.RestoreDocument(rpb.RestoreDocumentRequest(document_id="d"), timeout=30)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert stub.GetIndexStats(rpb.GetIndexStatsRequest(), timeout=10).total_points == 1
    finally:
        stack.stop()


def test_retention_drops_unused_inactive_sets_and_keeps_active_and_pinned_ones(kit):
    """ADR 0038: sets neither active nor pinned go after retention_days unused,
    or least recently used first past the size budget (never one used within the hour)."""
    from chunklab.timeutil import utcnow
    from services.retriever.lifecycle.sets import IndexSets, Retention

    service, _ = kit

    def configure(config: str, activation: int) -> None:
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id("r", "fixed_size", config, 0),
            document_id="r",
            document_name="r.md",
            strategy="fixed_size",
            chunk_index=0,
            content=f"text {config}",
            collection="policies",
        )
        header = rpb.IndexHeader(
            document_id="r",
            strategy="fixed_size",
            config_id=config,
            embedding_model="fake-4",
            dimension=4,
            expansion=pb.EXPANSION_KIND_NEIGHBORS,
            activation=activation,
        )
        service.index_chunks(header, [rpb.IndexedChunk(chunk=chunk, vector=[1.0, 0.0, 0.0, 0.0])])

    configure("active", pb.ACTIVATION_MAKE_ACTIVE)
    for config in ("old-trial", "pinned-trial", "new-trial"):
        configure(config, pb.ACTIVATION_KEEP_CURRENT)
    service.store.set_flags(("fake-4", "r", "fixed_size", "pinned-trial"), pinned=True)

    def left() -> list[str]:
        return sorted(s["config_id"] for s in service.store.list_sets(document_id="r"))

    sets = IndexSets(service, Retention(retention_days=30, budget_bytes=10**9))
    assert sets.apply_retention(utcnow()) == [] and len(left()) == 4  # everything was used just now
    tight = IndexSets(service, Retention(retention_days=30, budget_bytes=0))
    assert tight.apply_retention(utcnow()) == []  # over budget, but used within the hour
    service.store.touch("fake-4", "fixed_size", "new-trial")
    dropped = tight.apply_retention(utcnow() + timedelta(hours=2))
    assert [key[3] for key in dropped] == ["old-trial", "new-trial"]  # least recently used first
    assert left() == ["active", "pinned-trial"]
    assert {p.payload["config_id"] for _, _, idx in service.registry.all() for p in idx.scroll(None)} == {
        "active",
        "pinned-trial",
    }
    assert sets.apply_retention(utcnow() + timedelta(days=365)) == []  # active and pinned stay for good


def test_sets_recorded_before_they_had_bm25_statistics_get_them_at_the_first_hybrid_query(kit):
    from sqlalchemy import delete, select

    from services.retriever.store import SetTermsRow

    service, _ = kit
    fill(service)
    request = rpb.RetrieveRequest(
        query="new-news text 2",
        options=pb.RetrievalOptions(strategy="fixed_size", top_k=5, hybrid=True, embedding_model="fake-4"),
    )
    request.as_of.CopyFrom(to_proto(NOW))

    def ranking() -> list[tuple[str, float]]:
        return [(n.hit.chunk.content, n.hit.score) for n in service.retrieve(request).expansion_tree.hits]

    before = ranking()
    assert {content.split()[0] for content, _ in before} == {"new-news", "old-policy"}  # old-news is past its window
    with service.store._sessions.begin() as session:  # what a store written by the previous release holds
        session.execute(delete(SetTermsRow))
    service._term_counts = type(service._term_counts)()
    assert ranking() == before
    with service.store._sessions() as session:
        healed = {(r.document_id, r.strategy): (r.chunks, r.language) for r in session.scalars(select(SetTermsRow))}
    assert healed == {(d, "fixed_size"): (n, "en") for d, n in (("old-news", 5), ("new-news", 3), ("old-policy", 3))}
