"""Neighbour expansion on hand-built chunks, without any server."""

from __future__ import annotations

from chunklab import ids
from chunklab.v1 import common_pb2 as pb
from services.retriever.expansion import expand

HIT, NEIGHBOR = pb.CHUNK_LABEL_HIT, pb.CHUNK_LABEL_NEIGHBOR


def make_doc(document_id: str, count: int, strategy: str = "fixed_size") -> list[pb.Chunk]:
    return [
        pb.Chunk(
            chunk_id=ids.chunk_id(document_id, strategy, "cfg", i),
            document_id=document_id,
            strategy=strategy,
            config_id="cfg",
            chunk_index=i,
            role="chunk",
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
    flat, tree = expand([(doc[6], 0.9), (doc[2], 0.8)], 1, 2, lookup)
    assert [n.hit.chunk.chunk_index for n in tree.hits] == [6, 2]
    assert [n.hit.rank for n in tree.hits] == [1, 2]
    assert [[c.chunk.chunk_index for c in n.neighbors_prev] for n in tree.hits] == [[5], [1]]
    assert [[c.chunk.chunk_index for c in n.neighbors_next] for n in tree.hits] == [[7, 8], [3, 4]]
    assert [e.chunk.chunk_index for e in flat] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_a_shared_neighbour_is_under_both_hits_and_once_in_the_flat_list():
    doc = make_doc("a", 6)
    lookup, _ = lookup_in(doc)
    flat, tree = expand([(doc[1], 0.9), (doc[3], 0.7)], 1, 1, lookup)
    assert summary(tree.hits[0].neighbors_next) == [("a-2", NEIGHBOR)]
    assert summary(tree.hits[1].neighbors_prev) == [("a-2", NEIGHBOR)]
    assert summary(flat) == [("a-0", NEIGHBOR), ("a-1", HIT), ("a-2", NEIGHBOR), ("a-3", HIT), ("a-4", NEIGHBOR)]


def test_a_hit_that_neighbours_another_hit_stays_a_hit_in_the_flat_list():
    doc = make_doc("a", 5)
    lookup, _ = lookup_in(doc)
    flat, tree = expand([(doc[2], 0.9), (doc[3], 0.8)], 1, 1, lookup)
    assert summary(flat) == [("a-1", NEIGHBOR), ("a-2", HIT), ("a-3", HIT), ("a-4", NEIGHBOR)]
    assert [e.score for e in flat if e.label == HIT] == [0.9, 0.8]
    assert summary(tree.hits[0].neighbors_next) == [("a-3", NEIGHBOR)]


def test_edges_are_skipped_and_neighbours_stay_in_the_hits_document():
    first, second = make_doc("a", 3), make_doc("b", 3)
    lookup, calls = lookup_in(first, second)
    flat, tree = expand([(first[0], 0.9), (second[2], 0.5)], 2, 2, lookup)
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
    flat, tree = expand([(doc[3], 0.9), (doc[0], 0.4)], 0, 0, lookup)
    assert all(len(n.neighbors_prev) == len(n.neighbors_next) == 0 for n in tree.hits)
    assert summary(flat) == [("a-0", HIT), ("a-3", HIT)]
    assert calls == []


def test_other_strategies_ignore_the_neighbour_knobs():
    doc = make_doc("a", 4, strategy="recursive")
    lookup, calls = lookup_in(doc)
    flat, tree = expand([(doc[1], 0.9)], 2, 2, lookup)
    assert summary(flat) == [("a-1", HIT)]
    assert len(tree.hits[0].neighbors_prev) == len(tree.hits[0].neighbors_next) == 0
    assert calls == []


def test_no_hits_gives_an_empty_result():
    lookup, _ = lookup_in()
    flat, tree = expand([], 1, 1, lookup)
    assert flat == [] and len(tree.hits) == 0
