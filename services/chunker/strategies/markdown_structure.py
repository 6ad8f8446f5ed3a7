"""markdown_structure: one chunk per leaf heading section."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import Unit, paragraph_ranges, structure_units


def structure_pieces(source: SourceDocument, max_tokens: int) -> list[tuple[int, int, int, list[str]]]:
    """(start, end, tokens, heading_path) per structure chunk, in order.

    A unit is a section's own content (its heading line and the blocks
    before its first subsection; a bare heading joins its first subsection)
    or the content before the first heading. A unit over max_tokens is cut
    between its blocks (paragraphs, lists, tables, code) into groups of at
    most max_tokens; a block too big on its own goes through the recursive
    cascade. Without any heading, the document is one unit: its paragraphs
    grouped up to max_tokens.
    """
    text = source.text
    units = structure_units(source.tree)
    if not units:
        ranges = paragraph_ranges(text, source.tree)
        units = [Unit(ranges[0][0], ranges[-1][1], [])] if ranges else []
        blocks_of = {id(units[0]): ranges} if units else {}
    else:
        blocks_of = {id(u): u.block_ranges() for u in units}
    if not units:
        return []
    index = Spans.of(source)
    pieces = []
    for unit in units:
        count = index.exact(unit.start, unit.end)
        if count <= max_tokens:
            pieces.append((unit.start, unit.end, count, unit.heading_path))
        else:
            pieces += [(a, b, n, unit.heading_path) for a, b, n in index.pack(blocks_of[id(unit)], max_tokens)]
    return pieces


@REGISTRY.register
class MarkdownStructure(Strategy):
    name = "markdown_structure"
    description = "One chunk per leaf heading section, no overlap; sections over max_tokens are cut between paragraphs."
    knobs = (Knob("max_tokens", chunker_pb2.KNOB_TYPE_INT, 512, "Hard maximum tokens per chunk.", 16, 8192),)

    def chunk(self, source: SourceDocument, context: ChunkingContext | None = None):
        return [
            self.make_chunk(source, i, start, end, count, heading_path=path)
            for i, (start, end, count, path) in enumerate(structure_pieces(source, self.values["max_tokens"]))
        ]
