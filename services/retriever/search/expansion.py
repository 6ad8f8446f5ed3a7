"""Query-time expansion: from scored hits to the flat list the LLM sees and
the expansion tree the operator sees (SPEC section 4, seeds ADR-0023,
small-to-big, ADR 0003 and 0021).

Each index set declares its expansion kind (the strategy's, from the chunker):
- NEIGHBORS (fixed_size): each hit with `neighbor_prev` / `neighbor_next`
  chunks of its document (label NEIGHBOR); flat = hits + neighbours.
- WINDOW (sentence_window): each hit (a sentence unit) with the ±W units
  around it, the hit excluded (label WINDOW); flat = hits + window units.
- PARENT (parent_child, semantic_parent_child): each hit (a child) with its
  parent (label PARENT); flat = the parents only, each once (the child's text
  is inside its parent). A hit whose parent cannot be had stays in the flat
  list itself, so no retrieved text is lost.
- NONE (every other strategy): the hits only.

Pure functions over Chunk messages. Every chunk a hit pulls in has an id
computable from the hit (chunklab.ids.chunk_id, or the hit's parent_id), so
all of them are fetched with one `lookup` by id, never by a filter scan.
`lookup` returns only what may be shown (the service drops chunks outside
the freshness window there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from chunklab import ids
from chunklab.v1 import common_pb2 as pb

Lookup = Callable[[list[str]], dict[str, pb.Chunk]]
WindowFor = Callable[[pb.Chunk], int]


def neighbour_ids(hit: pb.Chunk, offsets: Iterable[int]) -> list[str]:
    """Ids of the units at chunk_index + offset in the hit's document (same
    strategy, configuration and role). Negative indexes (before the first
    unit) are left out; ids past the last unit simply find nothing."""
    unit_id = ids.ChunkIds(hit.document_id, hit.strategy, hit.config_id, hit.role)
    return [unit_id(hit.chunk_index + offset) for offset in offsets if hit.chunk_index + offset >= 0]


def expand(
    hits: list[tuple[pb.Chunk, float]],
    kind: int,
    neighbor_prev: int,
    neighbor_next: int,
    lookup: Lookup,
    window: int | WindowFor | None = None,
) -> tuple[list[pb.RetrievedChunk], pb.ExpansionTree]:
    """The flat list and the tree for hits in score order, expanded by `kind`
    (an ExpansionKind: the one the hits' sets declared).

    `window` is W for WINDOW: a number for every hit, or a function of the
    hit (the W its set was indexed with); None means 0.
    """
    if kind == pb.EXPANSION_KIND_WINDOW:
        return _expand_windows(hits, lookup, window)
    if kind == pb.EXPANSION_KIND_PARENT:
        return _expand_parents(hits, lookup)
    if kind != pb.EXPANSION_KIND_NEIGHBORS:
        neighbor_prev = neighbor_next = 0
    return _expand_neighbours(hits, neighbor_prev, neighbor_next, lookup)


def _hit(chunk: pb.Chunk, score: float, rank: int) -> pb.RetrievedChunk:
    return pb.RetrievedChunk(chunk=chunk, label=pb.CHUNK_LABEL_HIT, score=score, rank=rank)


def _fetch(lookup: Lookup, wanted: list[str]) -> dict[str, pb.Chunk]:
    return lookup(sorted(set(wanted))) if wanted else {}


def _expand_neighbours(hits, neighbor_prev: int, neighbor_next: int, lookup: Lookup):
    prev_offsets = list(range(-neighbor_prev, 0))
    next_offsets = list(range(1, neighbor_next + 1))
    sides = [(neighbour_ids(chunk, prev_offsets), neighbour_ids(chunk, next_offsets)) for chunk, _ in hits]
    found = _fetch(lookup, [chunk_id for prev, nxt in sides for chunk_id in prev + nxt])

    tree = pb.ExpansionTree()
    flat: dict[str, pb.RetrievedChunk] = {}
    for rank, ((chunk, score), (prev_ids, next_ids)) in enumerate(zip(hits, sides), start=1):
        hit = _hit(chunk, score, rank)
        flat[chunk.chunk_id] = hit
        node = tree.hits.add(hit=hit)
        for wanted_ids, side in ((prev_ids, node.neighbors_prev), (next_ids, node.neighbors_next)):
            for chunk_id in wanted_ids:
                neighbour = found.get(chunk_id)
                if neighbour is not None:
                    side.add(chunk=neighbour, label=pb.CHUNK_LABEL_NEIGHBOR)
    for node in tree.hits:
        for entry in [*node.neighbors_prev, *node.neighbors_next]:
            flat.setdefault(entry.chunk.chunk_id, entry)
    return document_order(flat.values(), hits), tree


def _expand_windows(hits, lookup: Lookup, window: int | WindowFor | None):
    def width(chunk: pb.Chunk) -> int:
        if window is None:
            return 0
        return max(0, window(chunk) if callable(window) else window)

    offsets = {}
    wanted: list[str] = []
    for chunk, _ in hits:
        w = width(chunk)
        offsets[chunk.chunk_id] = [o for o in range(-w, w + 1) if o != 0]
        wanted += neighbour_ids(chunk, offsets[chunk.chunk_id])
    found = _fetch(lookup, wanted)

    tree = pb.ExpansionTree()
    flat: dict[str, pb.RetrievedChunk] = {}
    for rank, (chunk, score) in enumerate(hits, start=1):
        hit = _hit(chunk, score, rank)
        flat[chunk.chunk_id] = hit
        node = tree.hits.add(hit=hit)
        for chunk_id in neighbour_ids(chunk, offsets[chunk.chunk_id]):  # document order
            unit = found.get(chunk_id)
            if unit is not None:
                node.window.add(chunk=unit, label=pb.CHUNK_LABEL_WINDOW)
    for node in tree.hits:
        for entry in node.window:
            flat.setdefault(entry.chunk.chunk_id, entry)
    return document_order(flat.values(), hits), tree


def _expand_parents(hits, lookup: Lookup):
    found = _fetch(lookup, [chunk.parent_id for chunk, _ in hits if chunk.HasField("parent_id") and chunk.parent_id])
    tree = pb.ExpansionTree()
    flat: dict[str, pb.RetrievedChunk] = {}
    for rank, (chunk, score) in enumerate(hits, start=1):
        hit = _hit(chunk, score, rank)
        node = tree.hits.add(hit=hit)
        parent = found.get(chunk.parent_id) if chunk.HasField("parent_id") else None
        if parent is None:
            flat.setdefault(chunk.chunk_id, hit)
            continue
        node.parent.CopyFrom(pb.RetrievedChunk(chunk=parent, label=pb.CHUNK_LABEL_PARENT))
        flat.setdefault(parent.chunk_id, node.parent)
    return document_order(flat.values(), hits), tree


def document_order(chunks: Iterable[pb.RetrievedChunk], hits: list[tuple[pb.Chunk, float]]) -> list[pb.RetrievedChunk]:
    """Documents in the order of their best hit, chunks by chunk_index within
    (parents before children of the same number: a parent holds them)."""
    doc_rank: dict[str, int] = {}
    for chunk, _ in hits:
        doc_rank.setdefault(chunk.document_id, len(doc_rank))
    return sorted(
        chunks,
        key=lambda r: (
            doc_rank.get(r.chunk.document_id, len(doc_rank)),
            r.chunk.chunk_index,
            r.chunk.role != pb.CHUNK_ROLE_PARENT,
        ),
    )
