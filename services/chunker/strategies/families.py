"""Parents and their children, as unified chunks (the parent-child strategies)."""

from __future__ import annotations

from dataclasses import dataclass, field

from chunklab.v1 import common_pb2
from services.chunker.strategies.base import SourceDocument, Strategy
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths


@dataclass
class Family:
    start: int
    end: int
    heading_path: list[str]
    children: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, tokens)


def capped(index: Spans, family: Family, limit: int) -> list[Family]:
    """A family whose parent is over `limit` tokens becomes consecutive
    families of whole children, each parent at most `limit` (a child is
    never cut by a parent boundary). Text before the first child (a heading)
    stays with the first parent while it fits."""
    if index.exact(family.start, family.end) <= limit or not family.children:
        return [family]
    out: list[Family] = []
    start = family.start
    group: list[tuple[int, int, int]] = []
    for child in family.children:
        if group and index.exact(start, child[1]) > limit:
            out.append(Family(start, group[-1][1], family.heading_path, group))
            start, group = child[0], []
        if not group and index.exact(start, child[1]) > limit:
            start = child[0]  # the heading does not fit with the first child
        group.append(child)
    out.append(Family(start, group[-1][1], family.heading_path, group))
    return out


def family_chunks(strategy: Strategy, source: SourceDocument, index: Spans, families: list[Family]):
    """Parent p (role "parent", chunk_index p), then its children (role
    "child", numbered across the document, parent_id = the parent's id).
    A child's heading path is its own (it may sit deeper than its parent)."""
    paths = HeadingPaths(source.tree)
    chunks = []
    child_index = 0
    for p, family in enumerate(f for f in families if f.children):
        start, end = index.trim(family.start, family.end)
        parent = strategy.make_chunk(
            source, p, start, end, role=common_pb2.CHUNK_ROLE_PARENT, heading_path=family.heading_path
        )
        chunks.append(parent)
        parent_id = parent.chunk_id
        for a, b, count in family.children:
            child = strategy.make_chunk(
                source, child_index, a, b, count, role=common_pb2.CHUNK_ROLE_CHILD, heading_path=paths.at(a)
            )
            child.parent_id = parent_id
            chunks.append(child)
            child_index += 1
    return chunks
