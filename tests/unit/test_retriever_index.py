"""Congruence: the same operations through Qdrant Edge and through
qdrant-client (local mode here; a server where CHUNKLAB_TEST_QDRANT_URL is
set) give the same answers."""

from __future__ import annotations

import math
import os
import uuid
import zlib

import numpy as np
import pytest
from qdrant_client import QdrantClient

from services.retriever.index import conditions as c
from services.retriever.index.edge import EdgeIndex
from services.retriever.index.payloads import IndexPoint, unit_vector
from services.retriever.index.qdrant_server import QdrantServerIndex
from services.retriever.lifecycle.freshness import ExpiryWatch, FreshnessPolicy
from services.retriever.search import lexical
from services.retriever.search.term_stats import TermCounts, weighted_query

DIM = 8


def vector(seed: int) -> list[float]:
    return unit_vector(np.random.default_rng(seed).standard_normal(DIM))


def point(
    doc: str,
    strategy: str,
    i: int,
    *,
    role: str = "chunk",
    collection: str = "news",
    ts: float = 1000.0,
    text: str = "",
    searchable: bool = True,
    config: str = "cfg",
    active: bool = True,
) -> IndexPoint:
    payload = {
        "document_id": doc,
        "strategy": strategy,
        "config_id": config,
        "collection": collection,
        "language": "en",
        "role": role,
        "chunk_index": i,
        "published_ts": ts,
        "set_state": "active" if active else "inactive",
        "chunk": f"{doc}/{strategy}/{role}/{i}" + (f"@{config}" if config != "cfg" else ""),
    }
    pid = str(uuid.uuid5(uuid.NAMESPACE_URL, payload["chunk"]))
    if not searchable:
        return IndexPoint(pid, payload)
    return IndexPoint(
        pid, payload, vector(zlib.crc32(payload["chunk"].encode())), lexical.document_vector(text or payload["chunk"])
    )


@pytest.fixture(params=["edge", "qdrant-client"])
def index(request, tmp_path):
    if request.param == "edge":
        built = EdgeIndex(tmp_path / "shard", DIM)
    else:
        url = os.environ.get("CHUNKLAB_TEST_QDRANT_URL")
        client = QdrantClient(url=url) if url else QdrantClient(":memory:")
        name = f"test_{uuid.uuid4().hex[:8]}"
        built = QdrantServerIndex(client, name, DIM)
    yield built
    built.close()


def fill(index) -> list[IndexPoint]:
    points = [point("a", "fixed_size", i, ts=1000.0 + i) for i in range(6)]
    points += [point("b", "fixed_size", i, collection="hr", ts=500.0) for i in range(4)]
    points += [point("a", "recursive", i) for i in range(3)]
    points += [point("a", "parent_child", i, role="child") for i in range(4)]
    points += [point("a", "parent_child", i, role="parent", searchable=False) for i in range(2)]
    index.replace("a", "fixed_size", "cfg", points[:6], True)
    index.replace("b", "fixed_size", "cfg", points[6:10], True)
    index.replace("a", "recursive", "cfg", points[10:13], True)
    index.replace("a", "parent_child", "cfg", points[13:], True)
    return points


def labels(found) -> list[str]:
    return [payload["chunk"] for payload, _ in found]


# qdrant-client's local mode always searches exactly and says so when asked for exact search.
@pytest.mark.filterwarnings("ignore:Local mode performs exact:UserWarning")
def test_search_is_exact_and_filtered_the_same_way(index):
    points = fill(index)
    query = points[2].dense
    found = index.search(query, c.match("strategy", "fixed_size"), 5)
    assert labels(found)[0] == "a/fixed_size/chunk/2" and found[0][1] == pytest.approx(1.0, abs=1e-5)
    # Exact dot products, in order: the same for both stores.
    expected = sorted(points[:10], key=lambda p: -float(np.dot(p.dense, query)))[:5]
    assert labels(found) == [p.payload["chunk"] for p in expected]
    assert labels(index.search(query, c.match("strategy", "fixed_size"), 5, exact=True)) == labels(found)
    only_b = index.search(query, c.All(must=(c.match("strategy", "fixed_size"), c.match("document_id", "b"))), 10)
    assert sorted(labels(only_b)) == [f"b/fixed_size/chunk/{i}" for i in range(4)]
    recent = index.search(query, c.All(must=(c.match("strategy", "fixed_size"), c.Range("published_ts", gte=1003))), 10)
    assert sorted(labels(recent)) == [f"a/fixed_size/chunk/{i}" for i in (3, 4, 5)]
    either = c.Any_((c.match("collection", "hr"), c.All(must=(c.Range("published_ts", lt=1001),))))
    assert sorted(labels(index.search(query, c.All(must=(c.match("strategy", "fixed_size"), either)), 20))) == sorted(
        ["a/fixed_size/chunk/0"] + [f"b/fixed_size/chunk/{i}" for i in range(4)]
    )


def test_parents_are_found_by_id_and_never_by_a_search(index):
    points = fill(index)
    parents = [p for p in points if p.payload["role"] == "parent"]
    for query in [p.dense for p in points if p.dense is not None]:
        found = index.search(query, c.match("strategy", "parent_child"), 100)
        assert all(payload["role"] == "child" for payload, _ in found) and len(found) == 4
    lexical_found = index.search_lexical(
        lexical.query_vector("a parent_child parent 0"), c.match("strategy", "parent_child"), 100
    )
    assert all(payload["role"] == "child" for payload, _ in lexical_found)
    got = index.get([p.point_id for p in parents] + [str(uuid.uuid4())])
    assert sorted(v["chunk"] for v in got.values()) == ["a/parent_child/parent/0", "a/parent_child/parent/1"]


def test_replace_swaps_a_document_strategy_and_delete_removes_a_document(index):
    fill(index)
    assert index.count() == 19
    assert index.replace("a", "fixed_size", "cfg", [point("a", "fixed_size", i) for i in range(2)], True) == 6
    assert index.count(c.All(must=(c.match("document_id", "a"), c.match("strategy", "fixed_size")))) == 2
    assert index.count(c.match("document_id", "b")) == 4  # the other document is untouched
    assert index.delete_document("a") == 2 + 3 + 6
    assert index.count() == 4 and index.delete_document("a") == 0
    assert index.exists(c.match("document_id", "b")) and not index.exists(c.match("document_id", "a"))


def test_sets_of_one_strategy_live_side_by_side_and_one_is_active(index):
    """Two configurations of fixed_size on one document: replacing one keeps the
    other; activating swaps which one a query without a config_id matches."""
    small = [point("a", "fixed_size", i, config="c256") for i in range(3)]
    large = [point("a", "fixed_size", i, config="c512", active=False) for i in range(2)]
    index.replace("a", "fixed_size", "c256", small, True)
    index.replace("a", "fixed_size", "c512", large, False)
    active = c.All(must=(c.match("strategy", "fixed_size"), c.match("set_state", "active")))
    assert index.count(active) == 3 and index.count() == 5
    assert index.count(c.match("config_id", "c512")) == 2

    index.activate("a", "fixed_size", "c512")
    assert sorted(p.payload["config_id"] for p in index.scroll(active)) == ["c512", "c512"]
    assert sorted(labels(index.search(large[0].dense, active, 10))) == [
        "a/fixed_size/chunk/0@c512",
        "a/fixed_size/chunk/1@c512",
    ]

    # Re-indexing c256 as active again takes the flag back from c512 in the same step.
    assert index.replace("a", "fixed_size", "c256", small[:2], True) == 3
    assert sorted(p.payload["config_id"] for p in index.scroll(active)) == ["c256", "c256"]
    assert index.delete_set("a", "fixed_size", "c512") == 2
    assert index.count() == 2 and index.count(c.match("config_id", "c256")) == 2


def test_the_oldest_publication_is_found_per_filter(index):
    """What the freshness check asks: the earliest published_ts among the points a filter selects."""
    assert index.oldest(None) is None
    fill(index)
    index.upsert([point("c", "fixed_size", 0, collection="chat", ts=750.0)])
    assert index.oldest(None) == 500.0
    assert index.oldest(c.match("collection", "news")) == 1000.0
    assert index.oldest(c.match("collection", "chat")) == 750.0
    assert index.oldest(c.All(must_not=(c.match("collection", "hr", "chat"),))) == 1000.0
    assert index.oldest(c.match("collection", "finance")) is None


def test_every_write_to_the_embedded_index_moves_its_generation(tmp_path):
    """Facts the service caches about the embedded index hold until the next write."""
    index = EdgeIndex(tmp_path / "shard", DIM)
    try:
        assert index.sole_writer
        seen = [index.generation]
        index.replace("a", "fixed_size", "cfg", [point("a", "fixed_size", 0)], True)
        seen.append(index.generation)
        index.upsert([point("b", "fixed_size", 0)])
        seen.append(index.generation)
        index.delete_document("a")
        seen.append(index.generation)
        assert len(set(seen)) == 4
    finally:
        index.close()


def test_the_window_check_follows_time_writes_and_window_changes(index):
    """ExpiryWatch answers as a probe of the index would, whether it remembers
    (the embedded index, written by this process alone) or asks every time."""
    day = 86400.0
    watch = ExpiryWatch()
    news = FreshnessPolicy({"news": 7, "default": 0})
    index.upsert(
        [
            point("a", "fixed_size", 0, collection="news", ts=10 * day),
            point("m", "fixed_size", 0, collection="misc", ts=2 * day),
        ]
    )

    def holds(policy: FreshnessPolicy, as_of_days: float) -> bool:
        answer = watch.holds_expired(index, policy, as_of_days * day)
        expired = policy.expired(as_of_days * day)
        assert answer == (expired is not None and index.exists(expired))  # what a probe finds
        return answer

    assert not holds(news, 12)
    assert holds(news, 18)  # time passed, nothing was written
    assert not holds(news, 12)
    index.upsert([point("b", "fixed_size", 0, collection="news", ts=1 * day)])  # old news arrives
    assert holds(news, 12)
    index.delete_document("b")
    assert not holds(news, 12)
    assert holds(FreshnessPolicy({"news": 1, "default": 0}), 12)  # a narrower window
    assert holds(FreshnessPolicy({"news": 0, "default": 5}), 12)  # misc falls under the default window
    assert not holds(FreshnessPolicy({"news": 0, "default": 0}), 1000)


def test_lexical_ranking_is_bm25_with_the_idf_the_query_carries(index):
    texts = [
        "the cat sat on the mat",
        "the dog chased the cat",
        "error code XJ-9000 in the pump log",
        "the mat was red",
    ]
    points = [point("t", "fixed_size", i, text=t) for i, t in enumerate(texts)]
    index.replace("t", "fixed_size", "cfg", points, True)
    counts = [TermCounts.of(p.sparse for p in points)]
    found = index.search_lexical(
        weighted_query(lexical.query_vector("XJ-9000"), counts), c.match("strategy", "fixed_size"), 10
    )
    assert labels(found) == ["t/fixed_size/chunk/2"]
    query = weighted_query(lexical.query_vector("cat mat"), counts)
    found = index.search_lexical(query, c.match("strategy", "fixed_size"), 10)
    assert labels(found)[0] == "t/fixed_size/chunk/0"  # both rare-ish words
    # The score is BM25 over these four chunks and nothing else: idf(cat) = idf(mat) = ln(1 + 2.5/2.5).
    cat_mat = dict(zip(points[0].sparse.indices, points[0].sparse.values))
    expected = sum(math.log(2.0) * cat_mat[t] for t in query.indices)
    assert found[0][1] == pytest.approx(expected, rel=1e-6)
    # Points elsewhere in the index (another set) change nothing: the store applies no IDF of its own.
    index.replace("u", "fixed_size", "cfg", [point("u", "fixed_size", i, text="cat " * 3) for i in range(20)], True)
    assert index.search_lexical(query, c.match("document_id", "t"), 10)[0][1] == found[0][1]


@pytest.mark.parametrize(
    "language, texts, question, expected, english_finds_it",
    [
        # French: "chats" and "chat" are one term (the English stemmer happens to agree).
        (
            "fr",
            ["Les chats mangent les souris.", "Le chien dort dans le jardin.", "Les oiseaux chantent le matin."],
            "un chat",
            0,
            True,
        ),
        # Chinese and Japanese have no spaces: uncut, a question shares no term with the sentence holding it.
        ("zh", ["我喜欢自然语言处理和机器学习。", "今天的天气很好。", "他在北京工作。"], "自然语言", 0, False),
        ("ja", ["今日は雨が降っています。", "東京は日本の首都です。", "猫が好きです。"], "日本の首都", 1, False),
        # Russian: "кошки" and "кошка" are one term only to the Russian stemmer.
        ("ru", ["Кошки любят рыбу.", "Собака спит во дворе.", "Птицы поют утром."], "кошка", 0, False),
    ],
)
def test_lexical_terms_follow_each_chunks_language(index, language, texts, question, expected, english_finds_it):
    points = [point("l", "fixed_size", i) for i in range(len(texts))]
    points = [
        IndexPoint(p.point_id, p.payload, p.dense, lexical.document_vector(t, language)) for p, t in zip(points, texts)
    ]
    index.replace("l", "fixed_size", "cfg", points, True)
    for languages in ([language], []):  # the query's language filter, or every language
        found = index.search_lexical(lexical.query_vector(question, languages), c.match("strategy", "fixed_size"), 10)
        assert labels(found)[:1] == [f"l/fixed_size/chunk/{expected}"], (language, languages)
    # What every chunk and question got before languages counted: English words and stems.
    shared = set(lexical.document_vector(texts[expected]).indices) & set(lexical.query_vector(question, ["en"]).indices)
    assert bool(shared) == english_finds_it


def test_scroll_returns_vectors_exactly_as_written(index):
    points = fill(index)
    by_id = {p.point_id: p for p in points}
    read = list(index.scroll(c.match("document_id", "a"), with_vectors=True))
    assert len(read) == 15
    for stored in read:
        written = by_id[stored.point_id]
        assert stored.payload == written.payload
        if written.dense is None:
            assert stored.dense is None
        else:
            assert np.array_equal(
                np.asarray(stored.dense, dtype=np.float32), np.asarray(written.dense, dtype=np.float32)
            )
            assert tuple(stored.sparse.indices) == written.sparse.indices


def test_both_stores_answer_the_same(tmp_path):
    """The same operations, side by side: identical rankings and scores."""
    edge = EdgeIndex(tmp_path / "shard", DIM)
    local = QdrantServerIndex(QdrantClient(":memory:"), "same", DIM)
    try:
        for store in (edge, local):
            fill(store)
        for seed in range(10):
            query = vector(10_000 + seed)
            where = c.All(must=(c.match("strategy", "fixed_size"),), must_not=(c.match("collection", "hr"),))
            a, b = edge.search(query, where, 4), local.search(query, where, 4)
            assert labels(a) == labels(b)
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
        sparse = lexical.query_vector("a fixed_size chunk 3")
        a = edge.search_lexical(sparse, c.match("strategy", "fixed_size"), 3)
        b = local.search_lexical(sparse, c.match("strategy", "fixed_size"), 3)
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-4)
    finally:
        edge.close()
        local.close()


def test_a_shard_written_when_the_store_applied_idf_is_rewritten_without_it_on_open(tmp_path):
    from qdrant_edge import EdgeShard, UpdateOperation

    from services.retriever.index.edge import _point, shard_config

    points = [point("old", "fixed_size", i, text=t) for i, t in enumerate(["pump fault", "pump log", "a fault"])]
    legacy = EdgeShard.create(str(tmp_path / "shard"), shard_config(DIM, store_idf=True))
    legacy.update(UpdateOperation.upsert_points([_point(p) for p in points]))
    legacy.flush()
    legacy.close()
    index = EdgeIndex(tmp_path / "shard", DIM)
    assert '"idf"' not in (tmp_path / "shard" / "edge_config.json").read_text()
    assert index.count() == 3 and not (tmp_path / "shard.previous").exists()
    query = lexical.query_vector("fault")
    found = index.search_lexical(query, None, 10)
    weights = {
        p.payload["chunk"]: dict(zip(p.sparse.indices, p.sparse.values))[query.indices[0]]
        for p in points
        if query.indices[0] in p.sparse.indices
    }
    assert {label: score for label, score in zip(labels(found), (s for _, s in found))} == pytest.approx(weights)
    assert labels(index.search(points[1].dense, None, 1)) == ["old/fixed_size/chunk/1"]
    index.close()


def test_a_collection_made_when_the_store_applied_idf_stops_applying_it():
    from qdrant_client import models

    client = QdrantClient(":memory:")
    client.create_collection(
        "legacy",
        vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.DOT)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    QdrantServerIndex(client, "legacy", DIM)
    assert client.get_collection("legacy").config.params.sparse_vectors["bm25"].modifier == models.Modifier.NONE


def test_stable_top_orders_ties_by_point_and_looks_past_a_tie_at_the_cut():
    from services.retriever.search.ranking import stable_top

    # Twelve points tied at 0.7 behind one at 0.9; the store hands ties back newest first.
    ranking = [({"document_id": "d", "strategy": "s", "config_id": "c", "role": "chunk", "chunk_index": 99}, 0.9)]
    ranking += [
        ({"document_id": "d", "strategy": "s", "config_id": "c", "role": "chunk", "chunk_index": i}, 0.7)
        for i in reversed(range(12))
    ]
    ranking += [({"document_id": "d", "strategy": "s", "config_id": "c", "role": "chunk", "chunk_index": 50}, 0.1)]
    asked = []

    def search(n):
        asked.append(n)
        return ranking[:n]

    top = stable_top(search, 3)
    assert [p["chunk_index"] for p, _ in top] == [99, 0, 1]  # not 99, 11, 10
    assert asked == [11, 44]  # the first 11 all tied at the cut: asked again for more
    # Scores equal to the sixth decimal are ties too (two stores may differ in the last bits).
    near = [({**ranking[1][0], "chunk_index": 2}, 0.7000000001), ({**ranking[1][0], "chunk_index": 1}, 0.7)]
    assert [p["chunk_index"] for p, _ in stable_top(lambda n: near[:n], 2)] == [1, 2]


def test_tied_points_come_back_in_the_documented_order_from_either_store(index):
    from services.retriever.search.ranking import stable_top

    same = vector(1)
    tied = [
        IndexPoint(p.point_id, p.payload, same, p.sparse)
        for p in [point(doc, "fixed_size", i) for doc in ("z-doc", "a-doc", "m-doc") for i in (3, 1)]
    ]
    for doc in ("z-doc", "a-doc", "m-doc"):  # arrival order: z first
        index.replace(doc, "fixed_size", "cfg", [p for p in tied if p.payload["document_id"] == doc], True)
    found = stable_top(lambda n: index.search(same, None, n, exact=True), 3)
    assert labels(found) == ["a-doc/fixed_size/chunk/1", "a-doc/fixed_size/chunk/3", "m-doc/fixed_size/chunk/1"]
