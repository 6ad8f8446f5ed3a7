"""HNSW graphs for the embedded index, built in another process and swapped
in (services/retriever/index/graph.py, ADR 0035): answers keep, writes are never
lost, a crash or a failed build leaves a whole shard."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid

import numpy as np
import pytest

from chunklab.v1 import retriever_pb2
from frontend.views.formatting import index_stats_html
from services.retriever.index import conditions as c
from services.retriever.index import edge as edge_index
from services.retriever.index import graph as graph_module
from services.retriever.index.edge import GRAPH_MARKER, EdgeIndex, GraphBuildFailed
from services.retriever.index.graph import GraphKeeper
from services.retriever.index.payloads import IndexPoint, unit_vector
from services.retriever.index.registry import IndexRegistry
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore

DIM = 16
DOCS = 20
PER_DOC = 150  # 3,000 points: a graph builds in about a second


def points(rng, doc: int, count: int = PER_DOC, base: int = 0) -> list[IndexPoint]:
    made = []
    for i in range(base, base + count):
        payload = {"document_id": f"d{doc}", "strategy": "fixed_size", "chunk_index": i, "chunk": f"d{doc}/{i}"}
        pid = str(uuid.uuid5(uuid.NAMESPACE_URL, payload["chunk"]))
        made.append(IndexPoint(pid, payload, unit_vector(rng.standard_normal(DIM))))
    return made


def filled(path) -> EdgeIndex:
    index = EdgeIndex(path, DIM)
    rng = np.random.default_rng(3)
    for doc in range(DOCS):
        index.replace(f"d{doc}", "fixed_size", "cfg", points(rng, doc), True)
    return index


def answers(index: EdgeIndex, queries, where=None, exact: bool = False) -> list[list[str]]:
    return [[p["chunk"] for p, _ in index.search(q, where, 5, exact)] for q in queries]


def queries(n: int = 30) -> list[list[float]]:
    rng = np.random.default_rng(11)
    return [unit_vector(rng.standard_normal(DIM)) for _ in range(n)]


def test_a_built_graph_keeps_the_answers_and_survives_a_restart(tmp_path):
    index = filled(tmp_path / "shard")
    one_document = c.match("document_id", "d7")
    exact, exact_filtered = answers(index, queries()), answers(index, queries(), one_document)
    assert not index.graph_current and index.graph_built_at() is None

    assert index.rebuild_graph() is True
    assert index.graph_current and index.graph_built_at() is not None
    assert index.count() == DOCS * PER_DOC
    # Filtered to one document, the search stays exact; unfiltered, the graph
    # finds (nearly) every one of the exact top 5.
    assert answers(index, queries(), one_document) == exact_filtered
    found = answers(index, queries())
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(found, exact)])
    assert recall >= 0.95
    # Asked for exact search, the graph is bypassed: the true top 5 every time.
    assert answers(index, queries(), exact=True) == exact
    assert index.get([points(np.random.default_rng(0), 7, 1, base=3)[0].point_id])  # fetched by id as before
    assert not list(tmp_path.glob("shard.*")), "no copy is left beside the shard"
    index.close()

    reopened = EdgeIndex(tmp_path / "shard", DIM)
    assert reopened.graph_current, "the graph is still there after a restart"
    assert answers(reopened, queries()) == found
    # The first write is not in the graph: the shard says so, and stays searchable.
    extra = points(np.random.default_rng(5), 99, 3)
    reopened.upsert(extra)
    assert not reopened.graph_current and reopened.graph_built_at() is not None
    reopened.close()
    # ... and says so after a restart too, with when the graph it still has was built.
    reopened = EdgeIndex(tmp_path / "shard", DIM)
    assert not reopened.graph_current and reopened.graph_built_at() is not None
    assert [p["chunk"] for p, _ in reopened.search(extra[1].dense, None, 1)] == ["d99/1"]
    reopened.close()


def test_past_the_full_scan_threshold_the_graph_answers_and_exact_search_bypasses_it(tmp_path):
    # 8,000 vectors of 384 dimensions are 12 MB: past the 10 MB under which Qdrant scans
    # every vector anyway, so searches walk the graph.
    dim, rng = 384, np.random.default_rng(5)
    centres = rng.standard_normal((40, dim))
    vectors = centres[rng.integers(40, size=8000)] + rng.normal(0, 0.7, size=(8000, dim))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    index = EdgeIndex(tmp_path / "shard", dim)
    index.upsert(
        [
            IndexPoint(
                str(uuid.uuid5(uuid.NAMESPACE_URL, f"v{i}")),
                {"document_id": f"d{i // 200}", "strategy": "fixed_size", "chunk": f"v{i}"},
                v.tolist(),
            )
            for i, v in enumerate(vectors)
        ]
    )
    asked = centres[rng.integers(40, size=40)] + rng.normal(0, 0.7, size=(40, dim))
    asked = [unit_vector(q) for q in asked]
    truth = [{f"v{i}" for i in np.argsort(-(vectors @ np.asarray(q, dtype=np.float32)))[:5]} for q in asked]

    assert index.rebuild_graph() is True
    assert [set(a) for a in answers(index, asked, exact=True)] == truth
    found = answers(index, asked)
    assert np.mean([len(set(a) & t) / 5 for a, t in zip(found, truth)]) >= 0.9
    index.close()


def test_searches_and_lookups_go_on_while_the_graph_is_built_and_swapped_in(tmp_path):
    index = filled(tmp_path / "shard")
    asked, failures, answered = queries(10), [], [0]
    wanted = [points(np.random.default_rng(0), 4, 1, base=i)[0].point_id for i in range(3)]
    done = threading.Event()

    def keep_asking() -> None:
        while not done.is_set():
            try:
                for q in asked:
                    assert len(index.search(q, None, 5)) == 5
                assert len(index.get(wanted)) == 3 and index.count() == DOCS * PER_DOC
                index.disk_bytes()
                answered[0] += 1
            except Exception as exc:  # collected for the assertion below
                failures.append(exc)

    asking = threading.Thread(target=keep_asking)
    asking.start()
    try:
        assert index.rebuild_graph() is True
    finally:
        done.set()
        asking.join()
    assert failures == [] and answered[0] > 0
    index.close()


def test_a_write_during_the_build_sets_the_graph_aside_and_is_kept(tmp_path, monkeypatch):
    index = filled(tmp_path / "shard")
    late = points(np.random.default_rng(8), 50, 5)
    real_run = edge_index._run_build

    def run_with_a_write(*args, **kwargs):
        index.upsert(late)  # a ProcessDocument lands while the graph is being built
        return real_run(*args, **kwargs)

    monkeypatch.setattr(edge_index, "_run_build", run_with_a_write)
    assert index.rebuild_graph() is False
    assert not index.graph_current
    assert index.count() == DOCS * PER_DOC + 5
    assert [p["chunk"] for p, _ in index.search(late[2].dense, None, 1)] == ["d50/2"]
    assert not list(tmp_path.glob("shard.*"))
    monkeypatch.setattr(edge_index, "_run_build", real_run)
    assert index.rebuild_graph() is True  # the next try covers the late points too
    assert index.count() == DOCS * PER_DOC + 5
    index.close()


def test_a_failed_build_leaves_the_shard_as_it_was(tmp_path, monkeypatch):
    index = filled(tmp_path / "shard")
    before = answers(index, queries(5))

    monkeypatch.setattr(
        edge_index,
        "graph_command",
        lambda folder, dimension: [
            sys.executable,
            "-c",
            "import sys; print('building', file=sys.stderr); sys.exit('No space left on device')",
        ],
    )
    with pytest.raises(GraphBuildFailed, match="shard failed: No space left on device"):
        index.rebuild_graph()
    assert not index.graph_current
    assert answers(index, queries(5)) == before
    assert not list(tmp_path.glob("shard.*"))
    index.close()


def test_stopping_the_retriever_kills_a_build_in_progress(tmp_path, monkeypatch):
    index = filled(tmp_path / "shard")
    monkeypatch.setattr(
        edge_index, "graph_command", lambda folder, dimension: [sys.executable, "-c", "import time; time.sleep(60)"]
    )
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    assert index.rebuild_graph(stop) is False
    assert time.monotonic() - started < 30 and not index.graph_current
    assert not list(tmp_path.glob("shard.*"))
    index.close()


def test_a_crash_in_the_middle_of_the_swap_leaves_one_whole_shard(tmp_path):
    index = filled(tmp_path / "shard")
    expected = answers(index, queries(5))
    index.close()
    # Crashed after moving the old shard aside, before moving the new one in:
    (tmp_path / "shard").rename(tmp_path / "shard.previous")
    (tmp_path / "shard.building").mkdir()  # and a half-copied build
    reopened = EdgeIndex(tmp_path / "shard", DIM)
    assert reopened.count() == DOCS * PER_DOC and answers(reopened, queries(5)) == expected
    assert not list(tmp_path.glob("shard.*"))
    reopened.close()


def test_the_keeper_builds_big_changed_idle_shards_only(tmp_path, monkeypatch):
    store = RetrieverStore(f"sqlite:///{tmp_path / 'retriever.sqlite3'}")
    registry = IndexRegistry(tmp_path / "edge", store)
    small = registry.get("small-model", DIM, create=True)
    small.upsert(points(np.random.default_rng(1), 0, 10))
    big = registry.get("big-model", DIM, create=True)
    rng = np.random.default_rng(2)
    for doc in range(DOCS):
        big.replace(f"d{doc}", "fixed_size", "cfg", points(rng, doc), True)
    now = [100.0]
    keeper = GraphKeeper(registry, min_points=1000, idle_s=30, clock=lambda: now[0])

    assert keeper.due() == [], "just written: a bulk load may still be going on"
    now[0] += 31
    assert [name for name, _ in keeper.due()] == ["big-model__16"]  # the small one stays exact
    assert keeper.run_once() == 1 and big.graph_current
    now[0] += 31
    assert keeper.due() == [], "nothing written since the graph"
    big.upsert(points(rng, 60, 2))
    now[0] += 10
    assert keeper.due() == []
    now[0] += 31
    assert [name for name, _ in keeper.due()] == ["big-model__16"]

    # A build that fails is not tried again at every look: only after a while, or a write.
    with monkeypatch.context() as patched:
        patched.setattr(
            edge_index,
            "graph_command",
            lambda folder, dimension: [sys.executable, "-c", "import sys; sys.exit('disk full')"],
        )
        assert keeper.run_once() == 0 and not big.graph_current
        now[0] += 60
        assert keeper.due() == []
        now[0] += graph_module.RETRY_AFTER_FAILURE_S
        assert [name for name, _ in keeper.due()] == ["big-model__16"]

    # The index stats say how each index is searched, and the UI says it in words.
    service = RetrieverService(registry, store, "big-model", lambda name: None, {})
    stats = service.stats()
    by_model = {i.embedding_model: i for i in stats.indexes}
    assert by_model["big-model"].points == DOCS * PER_DOC + 2 and not by_model["big-model"].graph_current
    assert by_model["big-model"].HasField("graph_built_at")
    assert not by_model["small-model"].HasField("graph_built_at")
    html = index_stats_html(stats)
    assert "points written since are searched exactly until the next build" in html
    assert "small-model (16 dimensions, 10 points): exact search" in html
    service.close()


def test_the_keeper_is_off_at_zero_points_and_the_server_backend_reads_in_words():
    keeper = GraphKeeper(registry=None, min_points=0, idle_s=1)
    keeper.start()
    assert not keeper._periodic.running
    stats = retriever_pb2.GetIndexStatsResponse(
        backend="qdrant", indexes=[retriever_pb2.VectorIndexInfo(embedding_model="m", dimension=384, points=5)]
    )
    assert "searched by the Qdrant server, which builds its own HNSW graphs" in index_stats_html(stats)


def test_the_build_process_writes_the_marker(tmp_path):
    index = filled(tmp_path / "shard")
    index.close()
    graph_module.main([str(tmp_path / "shard"), str(DIM)])
    assert json.loads((tmp_path / "shard" / GRAPH_MARKER).read_text())["points"] == DOCS * PER_DOC
    assert EdgeIndex(tmp_path / "shard", DIM).graph_current
