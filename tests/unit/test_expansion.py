"""Neighbour expansion on hand-built chunks, without any server."""

from __future__ import annotations

from chunklab import ids
from chunklab.v1 import common_pb2 as pb
from services.chunker.strategies import REGISTRY
from services.retriever.search.expansion import expand


def expand_as(hits, *args, **kwargs):
    """expand() with the expansion kind the hits' strategy declares (as the
    retriever reads it from the index set the chunker wrote)."""
    strategy = hits[0][0].strategy if hits else "fixed_size"
    return expand(hits, REGISTRY.get(strategy).expansion, *args, **kwargs)


HIT, NEIGHBOR = pb.CHUNK_LABEL_HIT, pb.CHUNK_LABEL_NEIGHBOR


def make_doc(document_id: str, count: int, strategy: str = "fixed_size") -> list[pb.Chunk]:
    return [
        pb.Chunk(
            chunk_id=ids.chunk_id(document_id, strategy, "cfg", i),
            document_id=document_id,
            strategy=strategy,
            config_id="cfg",
            chunk_index=i,
            role=pb.CHUNK_ROLE_CHUNK,
            content=f"{document_id}-{i}",
        )
        for i in range(count)
    ]


def lookup_in(*docs: list[pb.Chunk]):
    table = {c.chunk_id: c for doc in docs for c in doc}
    calls: list[list[str]] = []

    def lookup(point_ids: list[str]) -> dict[str, pb.Chunk]:
        calls.append(point_ids)
        return {pid: table[pid] for pid in point_ids if pid in table}

    return lookup, calls


def summary(entries) -> list[tuple[str, int]]:
    return [(e.chunk.content, e.label) for e in entries]


def test_hits_keep_score_order_and_neighbours_nest_under_each_hit():
    doc = make_doc("a", 10)
    lookup, _ = lookup_in(doc)
    flat, tree = expand_as([(doc[6], 0.9), (doc[2], 0.8)], 1, 2, lookup)
    assert [n.hit.chunk.chunk_index for n in tree.hits] == [6, 2]
    assert [n.hit.rank for n in tree.hits] == [1, 2]
    assert [[c.chunk.chunk_index for c in n.neighbors_prev] for n in tree.hits] == [[5], [1]]
    assert [[c.chunk.chunk_index for c in n.neighbors_next] for n in tree.hits] == [[7, 8], [3, 4]]
    assert [e.chunk.chunk_index for e in flat] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_a_shared_neighbour_is_under_both_hits_and_once_in_the_flat_list():
    doc = make_doc("a", 6)
    lookup, _ = lookup_in(doc)
    flat, tree = expand_as([(doc[1], 0.9), (doc[3], 0.7)], 1, 1, lookup)
    assert summary(tree.hits[0].neighbors_next) == [("a-2", NEIGHBOR)]
    assert summary(tree.hits[1].neighbors_prev) == [("a-2", NEIGHBOR)]
    assert summary(flat) == [("a-0", NEIGHBOR), ("a-1", HIT), ("a-2", NEIGHBOR), ("a-3", HIT), ("a-4", NEIGHBOR)]


def test_a_hit_that_neighbours_another_hit_stays_a_hit_in_the_flat_list():
    doc = make_doc("a", 5)
    lookup, _ = lookup_in(doc)
    flat, tree = expand_as([(doc[2], 0.9), (doc[3], 0.8)], 1, 1, lookup)
    assert summary(flat) == [("a-1", NEIGHBOR), ("a-2", HIT), ("a-3", HIT), ("a-4", NEIGHBOR)]
    assert [e.score for e in flat if e.label == HIT] == [0.9, 0.8]
    assert summary(tree.hits[0].neighbors_next) == [("a-3", NEIGHBOR)]


def test_edges_are_skipped_and_neighbours_stay_in_the_hits_document():
    first, second = make_doc("a", 3), make_doc("b", 3)
    lookup, calls = lookup_in(first, second)
    flat, tree = expand_as([(first[0], 0.9), (second[2], 0.5)], 2, 2, lookup)
    assert len(tree.hits[0].neighbors_prev) == 0
    assert summary(tree.hits[0].neighbors_next) == [("a-1", NEIGHBOR), ("a-2", NEIGHBOR)]
    assert summary(tree.hits[1].neighbors_prev) == [("b-0", NEIGHBOR), ("b-1", NEIGHBOR)]
    assert len(tree.hits[1].neighbors_next) == 0
    # Documents in the order of their best hit, chunks in document order within.
    assert [e.chunk.content for e in flat] == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]
    assert len(calls) == 1  # neighbours are fetched by id in one lookup


def test_zero_expansion_gives_hits_with_empty_lists_and_no_lookup():
    doc = make_doc("a", 4)
    lookup, calls = lookup_in(doc)
    flat, tree = expand_as([(doc[3], 0.9), (doc[0], 0.4)], 0, 0, lookup)
    assert all(len(n.neighbors_prev) == len(n.neighbors_next) == 0 for n in tree.hits)
    assert summary(flat) == [("a-0", HIT), ("a-3", HIT)]
    assert calls == []


def test_other_strategies_ignore_the_neighbour_knobs():
    doc = make_doc("a", 4, strategy="recursive")
    lookup, calls = lookup_in(doc)
    flat, tree = expand_as([(doc[1], 0.9)], 2, 2, lookup)
    assert summary(flat) == [("a-1", HIT)]
    assert len(tree.hits[0].neighbors_prev) == len(tree.hits[0].neighbors_next) == 0
    assert calls == []


def test_no_hits_gives_an_empty_result():
    lookup, _ = lookup_in()
    flat, tree = expand_as([], 1, 1, lookup)
    assert flat == [] and len(tree.hits) == 0


WINDOW, PARENT = pb.CHUNK_LABEL_WINDOW, pb.CHUNK_LABEL_PARENT


def make_units(document_id: str, count: int) -> list[pb.Chunk]:
    return [
        pb.Chunk(
            chunk_id=ids.chunk_id(document_id, "sentence_window", "cfg", i, pb.CHUNK_ROLE_SENTENCE),
            document_id=document_id,
            strategy="sentence_window",
            config_id="cfg",
            chunk_index=i,
            role=pb.CHUNK_ROLE_SENTENCE,
            content=f"{document_id}-s{i}",
        )
        for i in range(count)
    ]


def make_family(document_id: str, children_per_parent: list[int], strategy: str = "parent_child"):
    parents, children = [], []
    for p, count in enumerate(children_per_parent):
        parent_id = ids.chunk_id(document_id, strategy, "cfg", p, pb.CHUNK_ROLE_PARENT)
        parents.append(
            pb.Chunk(
                chunk_id=parent_id,
                document_id=document_id,
                strategy=strategy,
                config_id="cfg",
                chunk_index=p,
                role=pb.CHUNK_ROLE_PARENT,
                content=f"{document_id}-P{p}",
            )
        )
        for _ in range(count):
            i = len(children)
            children.append(
                pb.Chunk(
                    chunk_id=ids.chunk_id(document_id, strategy, "cfg", i, pb.CHUNK_ROLE_CHILD),
                    document_id=document_id,
                    strategy=strategy,
                    config_id="cfg",
                    chunk_index=i,
                    role=pb.CHUNK_ROLE_CHILD,
                    parent_id=parent_id,
                    content=f"{document_id}-c{i}",
                )
            )
    return parents, children


def test_sentence_window_puts_the_units_around_each_hit_under_it_and_merges_them_in_the_flat_list():
    units = make_units("a", 10)
    lookup, calls = lookup_in(units)
    flat, tree = expand_as([(units[5], 0.9), (units[1], 0.8)], 3, 3, lookup, window=2)
    # The tree: each hit with its ±2 window in document order, the hit itself excluded.
    assert summary([n.hit for n in tree.hits]) == [("a-s5", HIT), ("a-s1", HIT)]
    assert summary(tree.hits[0].window) == [("a-s3", WINDOW), ("a-s4", WINDOW), ("a-s6", WINDOW), ("a-s7", WINDOW)]
    assert summary(tree.hits[1].window) == [("a-s0", WINDOW), ("a-s2", WINDOW), ("a-s3", WINDOW)]  # edge skipped
    # Neighbour knobs do not apply to sentence_window.
    assert all(len(n.neighbors_prev) == len(n.neighbors_next) == 0 for n in tree.hits)
    # The flat list: hits and window units, once each, in document order.
    assert summary(flat) == [
        ("a-s0", WINDOW),
        ("a-s1", HIT),
        ("a-s2", WINDOW),
        ("a-s3", WINDOW),
        ("a-s4", WINDOW),
        ("a-s5", HIT),
        ("a-s6", WINDOW),
        ("a-s7", WINDOW),
    ]
    assert len(calls) == 1


def test_sentence_window_width_can_differ_per_hit_and_a_hit_inside_another_window_stays_a_hit():
    first, second = make_units("a", 6), make_units("b", 6)
    lookup, _ = lookup_in(first, second)
    widths = {"a": 1, "b": 0}
    flat, tree = expand_as(
        [(first[2], 0.9), (first[3], 0.7), (second[4], 0.5)], 0, 0, lookup, window=lambda hit: widths[hit.document_id]
    )
    assert summary(tree.hits[0].window) == [("a-s1", WINDOW), ("a-s3", WINDOW)]
    assert summary(tree.hits[1].window) == [("a-s2", WINDOW), ("a-s4", WINDOW)]
    assert len(tree.hits[2].window) == 0
    assert summary(flat) == [("a-s1", WINDOW), ("a-s2", HIT), ("a-s3", HIT), ("a-s4", WINDOW), ("b-s4", HIT)]


def test_parent_child_tree_shows_child_and_parent_and_the_flat_list_holds_each_parent_once():
    parents, children = make_family("a", [2, 3, 1])
    lookup, calls = lookup_in(parents, children)
    hits = [(children[3], 0.9), (children[0], 0.8), (children[2], 0.7)]  # children 2 and 3 share parent 1
    flat, tree = expand_as(hits, 1, 1, lookup)
    assert [(n.hit.chunk.content, n.hit.label, n.hit.rank) for n in tree.hits] == [
        ("a-c3", HIT, 1),
        ("a-c0", HIT, 2),
        ("a-c2", HIT, 3),
    ]
    assert [(n.parent.chunk.content, n.parent.label) for n in tree.hits] == [
        ("a-P1", PARENT),
        ("a-P0", PARENT),
        ("a-P1", PARENT),
    ]
    assert all(len(n.neighbors_prev) == len(n.neighbors_next) == len(n.window) == 0 for n in tree.hits)
    assert summary(flat) == [("a-P0", PARENT), ("a-P1", PARENT)]
    assert calls == [sorted({parents[0].chunk_id, parents[1].chunk_id})]


def test_semantic_parent_child_expands_the_same_way_and_a_missing_parent_keeps_its_child():
    parents, children = make_family("s", [1, 2], strategy="semantic_parent_child")
    lookup, _ = lookup_in(parents[1:], children)  # parent 0 is not there (e.g. outside the window)
    flat, tree = expand_as([(children[0], 0.9), (children[2], 0.6)], 0, 0, lookup)
    assert not tree.hits[0].HasField("parent")
    assert tree.hits[1].parent.chunk.content == "s-P1"
    assert summary(flat) == [("s-c0", HIT), ("s-P1", PARENT)]
