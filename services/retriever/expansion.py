"""Query-time expansion: from scored hits to the flat list the LLM sees and
the expansion tree the operator sees (SPEC section 4, seeds ADR-0023).

Pure functions over Chunk messages; the index is reached through `lookup`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from chunklab import ids
from chunklab.v1 import common_pb2 as pb

NEIGHBOR_STRATEGIES = frozenset({"fixed_size"})


def neighbour_ids(hit: pb.Chunk, offsets: Iterable[int]) -> list[str]:
    """Ids of the chunks at chunk_index + offset in the hit's document (same
    strategy and configuration). Negative indexes (before the first chunk)
    are left out; ids past the last chunk simply find nothing."""
    return [
        ids.chunk_id(hit.document_id, hit.strategy, hit.config_id, hit.chunk_index + offset, hit.role or "chunk")
        for offset in offsets
        if hit.chunk_index + offset >= 0
    ]


def expand(
    hits: list[tuple[pb.Chunk, float]],
    neighbor_prev: int,
    neighbor_next: int,
    lookup: Callable[[list[str]], dict[str, pb.Chunk]],
) -> tuple[list[pb.RetrievedChunk], pb.ExpansionTree]:
    """Neighbour expansion for fixed_size; other strategies get their hits only.

    Expansion is additive (the context may exceed top_k), neighbours come from
    the same document by chunk_index, missing neighbours at document edges are
    skipped, and the flat list holds every chunk once, hits labelled as hits.
    """
    expand_neighbours = bool(hits) and hits[0][0].strategy in NEIGHBOR_STRATEGIES
    prev_offsets = list(range(-neighbor_prev, 0)) if expand_neighbours else []
    next_offsets = list(range(1, neighbor_next + 1)) if expand_neighbours else []

    wanted: list[str] = []
    for chunk, _ in hits:
        wanted += neighbour_ids(chunk, prev_offsets) + neighbour_ids(chunk, next_offsets)
    found = lookup(sorted(set(wanted))) if wanted else {}

    tree = pb.ExpansionTree()
    flat: dict[str, pb.RetrievedChunk] = {}
    for rank, (chunk, score) in enumerate(hits, start=1):
        hit = pb.RetrievedChunk(chunk=chunk, label=pb.CHUNK_LABEL_HIT, score=score, rank=rank)
        flat[chunk.chunk_id] = hit
        node = tree.hits.add(hit=hit)
        for offsets, side in ((prev_offsets, node.neighbors_prev), (next_offsets, node.neighbors_next)):
            for chunk_id in neighbour_ids(chunk, offsets):
                neighbour = found.get(chunk_id)
                if neighbour is not None:
                    side.add(chunk=neighbour, label=pb.CHUNK_LABEL_NEIGHBOR)

    for node in tree.hits:
        for entry in [*node.neighbors_prev, *node.neighbors_next]:
            flat.setdefault(entry.chunk.chunk_id, entry)

    return document_order(flat.values(), hits), tree


def document_order(chunks: Iterable[pb.RetrievedChunk], hits: list[tuple[pb.Chunk, float]]) -> list[pb.RetrievedChunk]:
    """Documents in the order of their best hit, chunks by chunk_index within."""
    doc_rank: dict[str, int] = {}
    for chunk, _ in hits:
        doc_rank.setdefault(chunk.document_id, len(doc_rank))
    return sorted(chunks, key=lambda r: (doc_rank.get(r.chunk.document_id, len(doc_rank)), r.chunk.chunk_index))
