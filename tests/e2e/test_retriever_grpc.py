"""The retriever through gRPC, as its own process on a free port: exact
expansion trees for hand-built documents (one per expansion kind), freshness
with a fixed clock, recency decay ordering, hybrid retrieval where the
lexical ranking must win, index statistics and precise status codes.

Chunks are indexed directly through IndexChunks with vectors chosen against
the query's real embedding: v = s·q + √(1−s²)·u with u ⊥ q, so the score of
each chunk is exactly s and every ranking is known in advance.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import grpc
import numpy as np
import pytest

from chunklab import ids, knobs
from chunklab.embeddings import get_provider
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.timeutil import to_proto
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab_app.stack import Stack, wait_serving
from services.chunker.strategies import REGISTRY

HIT, NEIGHBOR, WINDOW, PARENT = (
    pb.CHUNK_LABEL_HIT,
    pb.CHUNK_LABEL_NEIGHBOR,
    pb.CHUNK_LABEL_WINDOW,
    pb.CHUNK_LABEL_PARENT,
)
MODEL = Settings().embedding_model  # the services' default, which they query with
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WINDOWS = {"news": 7, "chat": 7, "hr": 90, "finance": 90, "policies": 0, "default": 0}
ROLES = {
    "chunk": pb.CHUNK_ROLE_CHUNK,
    "sentence": pb.CHUNK_ROLE_SENTENCE,
    "child": pb.CHUNK_ROLE_CHILD,
    "parent": pb.CHUNK_ROLE_PARENT,
}
OPTION_FIELDS = {f.name for f in pb.RetrievalOptions.DESCRIPTOR.fields}


def start_retriever(data_dir, **env) -> Stack:
    stack = Stack(
        data_dir=data_dir,
        extra_env={
            "CHUNKLAB_SWEEP_INTERVAL_S": "0",
            "CHUNKLAB_FRESHNESS_WINDOWS": json.dumps(WINDOWS),
            **env,
        },
    )
    stack.addresses["retriever"] = f"{stack.host}:0"
    stack.addresses["retriever"] = stack._spawn("retriever", "services.retriever", stack.env(), "listening on", 120)
    wait_serving(stack.addresses["retriever"], 120)
    return stack


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    stack = start_retriever(tmp_path_factory.mktemp("retriever"))
    yield channels.retriever(stack.addresses["retriever"])
    stack.stop()


class Vectors:
    """Vectors with a chosen similarity to one query's embedding."""

    def __init__(self, query: str, seed: int = 0) -> None:
        self.q = get_provider(MODEL).embed_query(query).astype(np.float64)
        self.q /= np.linalg.norm(self.q)
        self.rng = np.random.default_rng(seed)

    def at(self, score: float) -> list[float]:
        u = self.rng.standard_normal(self.q.shape)
        u -= u.dot(self.q) * self.q
        u /= np.linalg.norm(u)
        return (score * self.q + math.sqrt(1 - score * score) * u).tolist()


def chunk(
    doc: str,
    strategy: str,
    i: int,
    *,
    role: str = "chunk",
    content: str = "",
    collection: str = "policies",
    published: datetime = NOW - timedelta(days=1),
    parent: int | None = None,
    config: str = "cfg",
) -> pb.Chunk:
    made = pb.Chunk(
        chunk_id=ids.chunk_id(doc, strategy, config, i, ROLES[role]),
        document_id=doc,
        document_name=f"{doc}.md",
        strategy=strategy,
        config_id=config,
        chunk_index=i,
        role=ROLES[role],
        content=content or f"{doc}-{role}{i}",
        collection=collection,
        language="en",
        published_at=to_proto(published),
    )
    if parent is not None:
        made.parent_id = ids.chunk_id(doc, strategy, config, parent, pb.CHUNK_ROLE_PARENT)
    return made


def index(
    stub,
    strategy: str,
    items: list[tuple[pb.Chunk, list[float]]],
    knobs: dict | None = None,
    doc: str | None = None,
    activation: int = pb.ACTIVATION_UNSPECIFIED,
):
    """IndexChunks as the chunker sends it: the strategy's declared expansion kind in the header."""
    doc = doc or items[0][0].document_id
    spec = pb.StrategySpec(name=strategy, knobs={k: pb.KnobValue(int_value=v) for k, v in (knobs or {}).items()})
    header = rpb.IndexHeader(
        document_id=doc,
        strategy=strategy,
        config_id=items[0][0].config_id,
        embedding_model=MODEL,
        dimension=384,
        spec=spec,
        expansion=REGISTRY.get(strategy).expansion,
        activation=activation,
    )
    messages = [
        rpb.IndexChunksRequest(header=header),
        rpb.IndexChunksRequest(
            batch=rpb.IndexChunkBatch(chunks=[rpb.IndexedChunk(chunk=c, vector=v) for c, v in items])
        ),
    ]
    return stub.IndexChunks(iter(messages), timeout=60)


def request_of(query: str, as_of: datetime | None = NOW, **fields) -> rpb.RetrieveRequest:
    """A RetrieveRequest from flat fields: RetrievalOptions' go into options."""
    options = {k: v for k, v in fields.items() if k in OPTION_FIELDS}
    rest = {k: v for k, v in fields.items() if k not in OPTION_FIELDS}
    request = rpb.RetrieveRequest(query=query, options=pb.RetrievalOptions(**options), **rest)
    if as_of is not None:
        request.as_of.CopyFrom(to_proto(as_of))
    return request


def ask(stub, query: str, strategy: str, top_k: int, doc: str | None = None, **fields) -> rpb.RetrieveResponse:
    request = request_of(query, strategy=strategy, top_k=top_k, **fields)
    if doc:
        request.options.filter.document_ids.append(doc)
    return stub.Retrieve(request, timeout=60)


def contents(entries) -> list[tuple[str, int]]:
    return [(e.chunk.content, e.label) for e in entries]


# -- expansion trees -----------------------------------------------------------


def test_fixed_size_tree_with_neighbours(retriever):
    v = Vectors("fixed size neighbours")
    scores = [0.1, 0.2, 0.9, 0.3, 0.8, 0.2, 0.1]
    items = [(chunk("fx", "fixed_size", i), v.at(s)) for i, s in enumerate(scores)]
    assert index(retriever, "fixed_size", items).chunks_indexed == 7
    response = ask(retriever, "fixed size neighbours", "fixed_size", 2, "fx", neighbor_prev=1, neighbor_next=2)
    tree = response.expansion_tree.hits
    assert [(n.hit.chunk.content, round(n.hit.score, 4), n.hit.rank) for n in tree] == [
        ("fx-chunk2", 0.9, 1),
        ("fx-chunk4", 0.8, 2),
    ]
    assert [contents(n.neighbors_prev) for n in tree] == [[("fx-chunk1", NEIGHBOR)], [("fx-chunk3", NEIGHBOR)]]
    assert [contents(n.neighbors_next) for n in tree] == [
        [("fx-chunk3", NEIGHBOR), ("fx-chunk4", NEIGHBOR)],
        [("fx-chunk5", NEIGHBOR), ("fx-chunk6", NEIGHBOR)],
    ]
    assert contents(response.retrieved_chunks) == [
        ("fx-chunk1", NEIGHBOR),
        ("fx-chunk2", HIT),
        ("fx-chunk3", NEIGHBOR),
        ("fx-chunk4", HIT),
        ("fx-chunk5", NEIGHBOR),
        ("fx-chunk6", NEIGHBOR),
    ]
    # Exact search (what experiments ask for) gives the same answer, here where every search is exact anyway.
    exact = ask(retriever, "fixed size neighbours", "fixed_size", 2, "fx", neighbor_prev=1, neighbor_next=2, exact=True)
    assert exact.retrieved_chunks == response.retrieved_chunks and exact.expansion_tree == response.expansion_tree


def test_sentence_window_uses_the_indexed_window_unless_the_query_sets_one(retriever):
    v = Vectors("sentence windows")
    scores = [0.1, 0.2, 0.3, 0.2, 0.1, 0.95, 0.1, 0.2]
    items = [(chunk("sw", "sentence_window", i, role="sentence"), v.at(s)) for i, s in enumerate(scores)]
    index(retriever, "sentence_window", items, knobs={"window": 1, "sentences_per_unit": 1})

    response = ask(retriever, "sentence windows", "sentence_window", 1, "sw", neighbor_prev=3, neighbor_next=3)
    (node,) = response.expansion_tree.hits
    assert contents([node.hit]) == [("sw-sentence5", HIT)]
    assert contents(node.window) == [("sw-sentence4", WINDOW), ("sw-sentence6", WINDOW)]  # W = 1 as indexed
    assert len(node.neighbors_prev) == len(node.neighbors_next) == 0
    assert contents(response.retrieved_chunks) == [
        ("sw-sentence4", WINDOW),
        ("sw-sentence5", HIT),
        ("sw-sentence6", WINDOW),
    ]

    wide = ask(retriever, "sentence windows", "sentence_window", 2, "sw", window=3)
    first, second = wide.expansion_tree.hits
    assert contents([second.hit]) == [("sw-sentence2", HIT)]
    assert [e.chunk.chunk_index for e in first.window] == [2, 3, 4, 6, 7]  # past the end: skipped
    assert [e.chunk.chunk_index for e in second.window] == [0, 1, 3, 4, 5]
    assert contents(wide.retrieved_chunks) == [
        ("sw-sentence0", WINDOW),
        ("sw-sentence1", WINDOW),
        ("sw-sentence2", HIT),
        ("sw-sentence3", WINDOW),
        ("sw-sentence4", WINDOW),
        ("sw-sentence5", HIT),
        ("sw-sentence6", WINDOW),
        ("sw-sentence7", WINDOW),
    ]

    none = ask(retriever, "sentence windows", "sentence_window", 1, "sw", window=0)
    assert contents(none.retrieved_chunks) == [("sw-sentence5", HIT)]


@pytest.mark.parametrize("strategy", ["parent_child", "semantic_parent_child"])
def test_parent_child_tree_shows_child_and_parent_and_sends_a_shared_parent_once(retriever, strategy):
    doc = f"pc-{strategy}"
    v = Vectors("parents and children")
    children = [(0, 0.2), (0, 0.85), (1, 0.9), (1, 0.8), (2, 0.1)]  # (parent, score)
    items = [(chunk(doc, strategy, i, role="child", parent=p), v.at(s)) for i, (p, s) in enumerate(children)]
    items += [(chunk(doc, strategy, p, role="parent", content=f"parent {p} text"), []) for p in range(3)]
    assert index(retriever, strategy, items).chunks_indexed == 8

    response = ask(retriever, "parents and children", strategy, 3, doc)
    tree = response.expansion_tree.hits
    assert [(n.hit.chunk.content, n.hit.label) for n in tree] == [
        (f"{doc}-child2", HIT),
        (f"{doc}-child1", HIT),
        (f"{doc}-child3", HIT),
    ]
    assert [(n.parent.chunk.content, n.parent.label) for n in tree] == [
        ("parent 1 text", PARENT),
        ("parent 0 text", PARENT),
        ("parent 1 text", PARENT),
    ]
    assert contents(response.retrieved_chunks) == [("parent 0 text", PARENT), ("parent 1 text", PARENT)]

    # Parents have no vector: no query ever returns one as a hit.
    everything = ask(retriever, "parent 2 text", strategy, 100, doc, hybrid=True)
    assert [n.hit.chunk.role for n in everything.expansion_tree.hits] == [pb.CHUNK_ROLE_CHILD] * 5


# -- freshness -----------------------------------------------------------------


def test_no_query_returns_content_outside_its_window(retriever):
    v = Vectors("freshness window")
    for doc, collection, age in (
        ("old-news", "news", 10),
        ("new-news", "news", 2),
        ("old-policy", "policies", 400),
        ("old-hr", "hr", 60),
        ("old-misc", "misc", 1000),
    ):
        items = [
            (
                chunk(doc, "fixed_size", i, collection=collection, published=NOW - timedelta(days=age)),
                v.at(0.5 + 0.1 * i),
            )
            for i in range(3)
        ]
        index(retriever, "fixed_size", items, doc=doc)
    request = dict(neighbor_prev=2, neighbor_next=2)

    def docs(as_of: datetime) -> set[str]:
        response = retriever.Retrieve(
            request_of(
                "freshness window",
                as_of,
                strategy="fixed_size",
                top_k=100,
                filter=pb.RetrievalFilter(document_ids=["old-news", "new-news", "old-policy", "old-hr", "old-misc"]),
                **request,
            ),
            timeout=60,
        )
        return {e.chunk.document_id for e in response.retrieved_chunks}

    assert docs(NOW) == {"new-news", "old-policy", "old-hr", "old-misc"}
    assert docs(NOW - timedelta(days=5)) == {"old-news", "new-news", "old-policy", "old-hr", "old-misc"}
    assert docs(NOW + timedelta(days=31)) == {"old-policy", "old-misc"}  # hr is past 90 days, news past 7


def test_what_arrives_or_changes_after_a_query_is_held_to_its_window_at_once(retriever):
    """The service remembers when the index's first point expires; a write or a
    window change must be seen by the very next query."""
    v = Vectors("late arrivals")
    index(
        retriever,
        "fixed_size",
        [(chunk("late-fresh", "fixed_size", 0, collection="news", published=NOW - timedelta(days=1)), v.at(0.6))],
    )

    def docs() -> set[str]:
        response = retriever.Retrieve(
            request_of(
                "late arrivals",
                strategy="fixed_size",
                top_k=10,
                filter=pb.RetrievalFilter(document_ids=["late-fresh", "late-old"]),
            ),
            timeout=60,
        )
        return {e.chunk.document_id for e in response.retrieved_chunks}

    def news_window(days: int) -> None:
        retriever.UpdateFreshnessWindow(
            rpb.UpdateFreshnessWindowRequest(window=rpb.FreshnessWindow(collection="news", max_age_days=days)),
            timeout=10,
        )

    assert docs() == {"late-fresh"}
    index(
        retriever,
        "fixed_size",
        [(chunk("late-old", "fixed_size", 0, collection="news", published=NOW - timedelta(days=8)), v.at(0.9))],
    )
    assert docs() == {"late-fresh"}  # eight days old: outside the news window from the start
    try:
        news_window(30)
        assert docs() == {"late-fresh", "late-old"}
    finally:
        news_window(WINDOWS["news"])
    assert docs() == {"late-fresh"}


def test_a_parent_outside_the_window_is_not_returned(retriever):
    """Hand-built: the child is fresh but its parent is dated outside the news window."""
    v = Vectors("stale parent")
    items = [
        (chunk("stale", "parent_child", 0, role="child", parent=0, collection="news"), v.at(0.9)),
        (chunk("stale", "parent_child", 1, role="child", parent=1, collection="news"), v.at(0.8)),
        (chunk("stale", "parent_child", 0, role="parent", collection="news", content="fresh parent"), []),
        (
            chunk(
                "stale",
                "parent_child",
                1,
                role="parent",
                collection="news",
                content="stale parent",
                published=NOW - timedelta(days=30),
            ),
            [],
        ),
    ]
    index(retriever, "parent_child", items)
    response = ask(retriever, "stale parent", "parent_child", 2, "stale")
    assert [n.HasField("parent") for n in response.expansion_tree.hits] == [True, False]
    assert contents(response.retrieved_chunks) == [("fresh parent", PARENT), ("stale-child1", HIT)]


def test_freshness_windows_can_be_listed_and_changed(retriever):
    listed = retriever.ListFreshnessWindows(rpb.ListFreshnessWindowsRequest(), timeout=10)
    assert {w.collection: w.max_age_days for w in listed.windows} == WINDOWS
    changed = retriever.UpdateFreshnessWindow(
        rpb.UpdateFreshnessWindowRequest(window=rpb.FreshnessWindow(collection="research", max_age_days=30)), timeout=10
    )
    assert changed.max_age_days == 30
    listed = retriever.ListFreshnessWindows(rpb.ListFreshnessWindowsRequest(), timeout=10)
    assert {w.collection: w.max_age_days for w in listed.windows} == {**WINDOWS, "research": 30}


# -- recency decay ---------------------------------------------------------------


def test_recency_decay_reorders_with_a_fixed_clock(retriever):
    v = Vectors("decay ordering")
    items = [
        (chunk("decay", "fixed_size", 0, published=NOW - timedelta(days=30), content="old"), v.at(0.9)),
        (chunk("decay", "fixed_size", 1, published=NOW, content="new"), v.at(0.8)),
    ]
    index(retriever, "fixed_size", items)

    def order(lam: float) -> list[tuple[str, float]]:
        response = ask(retriever, "decay ordering", "fixed_size", 2, "decay", recency_lambda=lam)
        return [(n.hit.chunk.content, round(n.hit.score, 4)) for n in response.expansion_tree.hits]

    assert order(0) == [("old", 0.9), ("new", 0.8)]
    assert order(0.001) == [("old", round(0.9 * math.exp(-0.03), 4)), ("new", 0.8)]  # older, more relevant: wins
    assert order(0.01) == [("new", 0.8), ("old", round(0.9 * math.exp(-0.3), 4))]


def test_decay_looks_past_the_top_k_for_a_fresh_chunk(retriever):
    v = Vectors("deep candidates")
    items = [
        (chunk("deep", "fixed_size", i, published=NOW - timedelta(days=365), content=f"old {i}"), v.at(0.9 - 0.01 * i))
        for i in range(30)
    ]
    items.append((chunk("deep", "fixed_size", 30, published=NOW, content="fresh"), v.at(0.55)))
    index(retriever, "fixed_size", items)
    plain = ask(retriever, "deep candidates", "fixed_size", 1, "deep")
    assert plain.expansion_tree.hits[0].hit.chunk.content == "old 0"
    decayed = ask(retriever, "deep candidates", "fixed_size", 1, "deep", recency_lambda=0.01)
    assert decayed.expansion_tree.hits[0].hit.chunk.content == "fresh"  # 31st by similarity


# -- hybrid --------------------------------------------------------------------


def test_hybrid_retrieval_finds_the_rare_identifier_the_dense_ranking_misses(retriever):
    v = Vectors("pump fault XJ-9047")
    texts = [
        "The cooling pump was serviced in spring.",
        "Maintenance crews inspect pumps weekly.",
        "Pump pressure readings are logged hourly.",
        "A pump failure stops the cooling loop.",
        "Spare parts are ordered through the portal.",
        "Unit XJ-9047 reported a bearing warning.",
    ]
    scores = [0.8, 0.75, 0.7, 0.65, 0.6, 0.2]
    items = [(chunk("hy", "recursive", i, content=t), v.at(s)) for i, (t, s) in enumerate(zip(texts, scores))]
    index(retriever, "recursive", items)
    dense = ask(retriever, "XJ-9047", "recursive", 3, "hy")
    assert "XJ-9047" not in " ".join(n.hit.chunk.content for n in dense.expansion_tree.hits)
    hybrid = ask(retriever, "XJ-9047", "recursive", 3, "hy", hybrid=True)
    top = hybrid.expansion_tree.hits[0].hit
    assert top.chunk.content == texts[5]
    assert top.score == pytest.approx(1 / 61 + 1 / 66)  # lexical rank 1, dense rank 6 (k = 60)


def test_fusion_k_sets_how_much_each_rankings_first_hits_count(retriever):
    """ADR 0139: score = sum of 1 / (k + rank); a small k lets a ranking's first hit outrank
    a chunk both rankings hold further down."""
    v = Vectors("V-220")
    texts = [
        "Valve seals wear out after years of heat.",  # dense rank 1, no lexical match
        "Seals are replaced during the yearly stop.",
        "Heat cycles harden rubber parts.",
        "The V-220 valve seal was replaced by the night shift.",  # dense rank 4, lexical rank 1
    ]
    scores = [0.9, 0.8, 0.7, 0.6]
    items = [(chunk("fk", "recursive", i, content=t), v.at(s)) for i, (t, s) in enumerate(zip(texts, scores))]
    index(retriever, "recursive", items)
    usual = ask(retriever, "V-220", "recursive", 2, "fk", hybrid=True)
    assert [n.hit.chunk.content for n in usual.expansion_tree.hits] == [texts[3], texts[0]]
    assert usual.expansion_tree.hits[0].hit.score == pytest.approx(1 / 61 + 1 / 64)
    sharp = ask(retriever, "V-220", "recursive", 2, "fk", hybrid=True, fusion_k=1)
    assert [n.hit.score for n in sharp.expansion_tree.hits] == pytest.approx([1 / 2 + 1 / 5, 1 / 2])
    with pytest.raises(grpc.RpcError) as dense:
        ask(retriever, "V-220", "recursive", 2, "fk", fusion_k=1)
    assert dense.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "fusion_k weighs the dense and lexical rankings of hybrid retrieval" in dense.value.details()
    with pytest.raises(grpc.RpcError) as zero:
        ask(retriever, "V-220", "recursive", 2, "fk", hybrid=True, fusion_k=0)
    assert zero.value.details() == "fusion_k must be between 1 and 1000, got 0"


# -- statistics and errors -------------------------------------------------------


def test_index_stats_count_points_per_strategy_and_collection(retriever):
    v = Vectors("stats")
    index(
        retriever,
        "markdown_structure",
        [(chunk("st1", "markdown_structure", i, collection="finance"), v.at(0.5)) for i in range(4)],
    )
    index(
        retriever,
        "markdown_structure",
        [(chunk("st2", "markdown_structure", i, collection="finance"), v.at(0.5)) for i in range(2)],
    )
    stats = retriever.GetIndexStats(rpb.GetIndexStatsRequest(), timeout=30)
    rows = {(r.embedding_model, r.strategy, r.collection): r for r in stats.rows}
    row = rows[(MODEL, "markdown_structure", "finance")]
    assert (row.points, row.documents) == (6, 2) and row.bytes > 6 * 384 * 4
    assert stats.total_points == sum(r.points for r in stats.rows)
    assert stats.backend == "edge" and stats.disk_bytes > 0
    # Far below the HNSW threshold: the index says it is searched exactly, graph never built.
    (info,) = [i for i in stats.indexes if i.embedding_model == MODEL]
    assert info.dimension == 384 and info.points == stats.total_points
    assert not info.graph_current and not info.HasField("graph_built_at")


def test_how_a_document_is_indexed_can_be_asked_with_the_knobs_that_made_it(retriever):
    v = Vectors("indexed set")
    index(
        retriever,
        "recursive",
        [(chunk("set1", "recursive", i), v.at(0.5)) for i in range(3)],
        knobs={"chunk_size": 128, "chunk_overlap": 0},
    )
    found = retriever.GetIndexedSet(
        rpb.GetIndexedSetRequest(
            key=rpb.IndexedSetKey(embedding_model=MODEL, document_id="set1", strategy="recursive")
        ),
        timeout=10,
    )
    assert (found.config_id, found.points, found.spec.name, found.active) == ("cfg", 3, "recursive", True)
    assert found.expansion == pb.EXPANSION_KIND_NONE and found.document_name == "set1.md"
    assert {k: v.int_value for k, v in found.spec.knobs.items()} == {"chunk_size": 128, "chunk_overlap": 0}
    assert found.spec.knobs["chunk_size"].WhichOneof("kind") == "int_value" and found.HasField("indexed_at")
    for fields, expected in (
        (dict(document_id="set1", strategy="fixed_size"), grpc.StatusCode.NOT_FOUND),
        (dict(document_id="", strategy="recursive"), grpc.StatusCode.INVALID_ARGUMENT),
    ):
        code, message = code_of(
            lambda: retriever.GetIndexedSet(
                rpb.GetIndexedSetRequest(key=rpb.IndexedSetKey(embedding_model=MODEL, **fields)), timeout=10
            )
        )
        assert code == expected and message


def code_of(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code(), err.value.details()


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        (dict(top_k=-1), "top_k"),
        (dict(top_k=101), "top_k"),
        (dict(window=21), "window"),
        (dict(recency_lambda=101.0), "recency_lambda"),
        (dict(config_id="not an id"), "configuration id"),
        (dict(neighbor_prev=-1), "neighbor_prev"),
        (dict(neighbor_next=11), "neighbor_next"),
        (dict(window=-1), "window"),
        (dict(recency_lambda=-0.5), "recency_lambda"),
        (dict(embedding_model="no-such-model"), "no-such-model"),
        (dict(strategy="Fixed Size!"), "strategy"),
        (dict(filter=pb.RetrievalFilter(document_ids=[""])), "document_ids"),
        (dict(filter=pb.RetrievalFilter(collections=["news; drop"])), "collections"),
        (dict(filter=pb.RetrievalFilter(languages=["english!"])), "languages"),
        (dict(query="   "), "query"),
    ],
)
def test_bad_retrieve_requests_are_invalid_argument(retriever, fields, needle):
    request = request_of(**{"query": "anything", "as_of": None, "strategy": "fixed_size", "top_k": 3, **fields})
    code, message = code_of(lambda: retriever.Retrieve(request, timeout=30))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and needle in message


def test_other_bad_requests_get_precise_codes(retriever):
    cases = [
        (
            lambda: retriever.UpdateFreshnessWindow(
                rpb.UpdateFreshnessWindowRequest(window=rpb.FreshnessWindow(collection="news", max_age_days=-1)),
                timeout=10,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            lambda: retriever.UpdateFreshnessWindow(
                rpb.UpdateFreshnessWindowRequest(window=rpb.FreshnessWindow(collection="", max_age_days=3)), timeout=10
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            lambda: retriever.RestoreDocument(rpb.RestoreDocumentRequest(document_id="never-archived"), timeout=10),
            grpc.StatusCode.NOT_FOUND,
        ),
        (
            lambda: retriever.ListArchivedDocuments(rpb.ListArchivedDocumentsRequest(page_size=-1), timeout=10),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            lambda: retriever.ListArchivedDocuments(rpb.ListArchivedDocumentsRequest(page_token="%%%"), timeout=10),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            lambda: index(retriever, "fixed_size", [(chunk("bad", "fixed_size", 0), [0.0] * 384)]),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            lambda: index(retriever, "fixed_size", [(chunk("bad", "fixed_size", 0), [])]),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ]
    for call, expected in cases:
        code, message = code_of(call)
        assert code == expected, message


# -- index sets ------------------------------------------------------------------


def test_two_configurations_of_one_strategy_are_searched_side_by_side(retriever):
    """fixed_size 256/0 and 512/64 on one document: both indexed, each answers by
    its config_id with its own chunks (and its own neighbours); the last one
    processed is active; an experiment's set never becomes active."""
    v = Vectors("side by side")
    small = knobs.config_id("fixed_size", REGISTRY.get("fixed_size").knobs, {"chunk_size": 256, "chunk_overlap": 0})
    large = knobs.config_id("fixed_size", REGISTRY.get("fixed_size").knobs, {"chunk_size": 512, "chunk_overlap": 64})
    trial = knobs.config_id("fixed_size", REGISTRY.get("fixed_size").knobs, {"chunk_size": 128, "chunk_overlap": 0})
    index(
        retriever,
        "fixed_size",
        [(chunk("sbs", "fixed_size", i, config=small, content=f"small {i}"), v.at(0.5 + 0.1 * i)) for i in range(4)],
    )
    second = index(
        retriever,
        "fixed_size",
        [(chunk("sbs", "fixed_size", i, config=large, content=f"large {i}"), v.at(0.6 + 0.1 * i)) for i in range(2)],
    )
    assert (second.chunks_indexed, second.chunks_replaced, second.active) == (2, 0, True)

    def hits(**fields) -> list[str]:
        response = ask(retriever, "side by side", "fixed_size", 2, "sbs", **fields)
        return [e.chunk.content for e in response.retrieved_chunks]

    assert hits() == ["large 0", "large 1"]  # the last processed is active
    assert hits(config_id=small, neighbor_prev=1) == ["small 1", "small 2", "small 3"]
    assert hits(config_id=large) == ["large 0", "large 1"]

    listed = retriever.ListIndexedSets(rpb.ListIndexedSetsRequest(document_id="sbs"), timeout=10).sets
    assert sorted((s.config_id, s.active, s.points) for s in listed) == sorted([(small, False, 4), (large, True, 2)])
    assert listed[0].config_id == large  # newest first
    key = rpb.IndexedSetKey(embedding_model=MODEL, document_id="sbs", strategy="fixed_size", config_id=small)
    assert retriever.ActivateIndexedSet(rpb.ActivateIndexedSetRequest(key=key), timeout=10).active
    assert hits() == ["small 2", "small 3"]

    experiment = index(
        retriever,
        "fixed_size",
        [(chunk("sbs", "fixed_size", 0, config=trial, content="trial 0"), v.at(0.99))],
        activation=pb.ACTIVATION_KEEP_CURRENT,
    )
    assert not experiment.active
    assert hits() == ["small 2", "small 3"]  # unchanged by the experiment's set
    again = index(
        retriever,
        "fixed_size",
        [(chunk("sbs", "fixed_size", i, config=small, content=f"small {i}"), v.at(0.5 + 0.1 * i)) for i in range(4)],
        activation=pb.ACTIVATION_KEEP_CURRENT,
    )
    assert (again.active, again.chunks_replaced) == (True, 4)  # the active set, indexed again, stays active
    assert hits() == ["small 2", "small 3"]
    assert hits(config_id=trial) == ["trial 0"]

    pinned = retriever.PinIndexedSet(rpb.PinIndexedSetRequest(key=key, pinned=True), timeout=10)
    assert pinned.pinned and pinned.active
    large_key = rpb.IndexedSetKey(embedding_model=MODEL, document_id="sbs", strategy="fixed_size", config_id=large)
    deleted = retriever.DeleteIndexedSet(rpb.DeleteIndexedSetRequest(key=large_key), timeout=10)
    assert deleted.chunks_deleted == 2
    code, message = code_of(lambda: ask(retriever, "side by side", "fixed_size", 2, "sbs", config_id=large))
    assert code == grpc.StatusCode.NOT_FOUND and large in message and "lists each document’s index sets" in message
    code, _ = code_of(lambda: retriever.ActivateIndexedSet(rpb.ActivateIndexedSetRequest(key=large_key), timeout=10))
    assert code == grpc.StatusCode.NOT_FOUND
    code, message = code_of(
        lambda: retriever.PinIndexedSet(
            rpb.PinIndexedSetRequest(
                key=rpb.IndexedSetKey(embedding_model=MODEL, document_id="sbs", strategy="fixed_size")
            ),
            timeout=10,
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "config_id" in message


def test_the_retrieval_limits_are_published_as_enforced(retriever):
    from chunklab import retrieval

    limits = retriever.GetRetrievalLimits(rpb.GetRetrievalLimitsRequest(), timeout=10)
    assert limits == retrieval.LIMITS
    code, message = code_of(lambda: ask(retriever, "q", "fixed_size", limits.max_top_k + 1))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and str(limits.max_top_k) in message
    assert ask(retriever, "side by side", "fixed_size", 0, "sbs").expansion_tree.hits  # 0: the default top_k
    code, message = code_of(
        lambda: retriever.UpdateFreshnessWindow(
            rpb.UpdateFreshnessWindowRequest(
                window=rpb.FreshnessWindow(collection="news", max_age_days=limits.max_freshness_days + 1)
            ),
            timeout=10,
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and str(limits.max_freshness_days) in message


# -- rankings that do not depend on the index's layout (ADR 0044) ----------------


def test_tied_passages_rank_by_document_then_chunk_whatever_order_they_were_indexed_in(retriever):
    # The same passage in two documents embeds to the same vector: exactly tied scores.
    v = Vectors("the shared clause")
    same, other = v.at(0.9), v.at(0.5)
    passage = "Either party may end this agreement with thirty days notice."

    def index_doc(doc: str) -> None:
        index(
            retriever,
            "recursive",
            [
                (chunk(doc, "recursive", 0, content="intro", collection="ties"), other),
                (chunk(doc, "recursive", 1, content=passage, collection="ties"), same),
            ],
        )

    def top(**fields) -> list[tuple[str, int]]:
        request = request_of("the shared clause", strategy="recursive", top_k=1, **fields)
        request.options.filter.collections.append("ties")
        hits = retriever.Retrieve(request, timeout=60).expansion_tree.hits
        return [(n.hit.chunk.document_id, n.hit.chunk.chunk_index) for n in hits]

    index_doc("tie-b")
    index_doc("tie-a")
    first = {"dense": top(), "hybrid": top(hybrid=True)}
    assert first == {"dense": [("tie-a", 1)], "hybrid": [("tie-a", 1)]}  # document id breaks the tie, not arrival
    # tie-a indexed again (now the later arrival in the store), then tie-b: the same answers.
    index_doc("tie-a")
    assert {"dense": top(), "hybrid": top(hybrid=True)} == first
    index_doc("tie-b")
    assert {"dense": top(), "hybrid": top(hybrid=True)} == first


def test_hybrid_ranking_depends_only_on_the_sets_it_searches(retriever):
    # In the searched set "beta" is rarer than "alpha"; in the unrelated ones it is everywhere. An
    # IDF over the whole index would rank the alpha chunks above the beta one.
    v = Vectors("alpha beta")
    texts = [
        "beta in the plan",
        "alpha notes on the plan",
        "alpha again in the plan",
        "the plan itself",
        "nothing relevant here",
    ]
    items = [(chunk("scope", "recursive", i, content=t, collection="scoped"), v.at(0.5)) for i, t in enumerate(texts)]
    index(retriever, "recursive", items)

    def rankings() -> list[list[tuple[str, float]]]:
        found = []
        for question in ("alpha beta", "beta", "the plan alpha"):
            request = request_of(question, strategy="recursive", top_k=5, hybrid=True)
            request.options.filter.collections.append("scoped")
            hits = retriever.Retrieve(request, timeout=60).expansion_tree.hits
            found.append([(n.hit.chunk.content, round(n.hit.score, 9)) for n in hits])
        return found

    before = rankings()
    assert before[0][0][0] == "beta in the plan"
    noise = [f"beta beta report {i}" for i in range(40)]
    unrelated = [  # another collection, another strategy of the same document, another configuration of it
        ("noise-doc", "recursive", "cfg", "elsewhere", pb.ACTIVATION_UNSPECIFIED),
        ("scope", "fixed_size", "cfg", "scoped", pb.ACTIVATION_UNSPECIFIED),
        ("scope", "recursive", "other", "scoped", pb.ACTIVATION_KEEP_CURRENT),
    ]
    for doc, strategy, config, collection, activation in unrelated:
        index(
            retriever,
            strategy,
            [
                (chunk(doc, strategy, i, content=t, collection=collection, config=config), v.at(0.4))
                for i, t in enumerate(noise)
            ],
            doc=doc,
            activation=activation,
        )
    assert rankings() == before
    for doc, strategy, config, _, _ in unrelated:
        key = rpb.IndexedSetKey(embedding_model=MODEL, document_id=doc, strategy=strategy, config_id=config)
        retriever.DeleteIndexedSet(rpb.DeleteIndexedSetRequest(key=key), timeout=10)
    assert rankings() == before
    # Searching the noise as well is another question: there beta is common and alpha ranks first.
    request = request_of("alpha beta", strategy="recursive", top_k=5, hybrid=True)
    request.options.filter.collections.extend(["scoped", "elsewhere"])
    index(
        retriever,
        "recursive",
        [
            (chunk("noise-doc", "recursive", i, content=t, collection="elsewhere"), v.at(0.4))
            for i, t in enumerate(noise)
        ],
        doc="noise-doc",
    )
    mixed = retriever.Retrieve(request, timeout=60).expansion_tree.hits
    assert mixed[0].hit.chunk.content.startswith("alpha")
