"""fixed_size: token windows with overlap, the baseline."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy

# One code point takes at most 4 cl100k tokens (one per UTF-8 byte): any
# window of 8 holds at least one whole character.
MIN_CHUNK_SIZE = 8


@REGISTRY.register
class FixedSize(Strategy):
    name = "fixed_size"
    expansion = common_pb2.EXPANSION_KIND_NEIGHBORS
    description = "Token windows of chunk_size cl100k_base tokens, each overlapping the previous by chunk_overlap."
    knobs = (
        Knob("chunk_size", chunker_pb2.KNOB_TYPE_INT, 512, "Tokens per chunk (a hard maximum).", MIN_CHUNK_SIZE, 8192),
        Knob("chunk_overlap", chunker_pb2.KNOB_TYPE_INT, 64, "Tokens shared with the previous chunk.", 0, 8191),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext | None = None):
        """Windows over the tokenization of the whole text.

        A window boundary inside a multi-byte character moves to that
        character's start, so every chunk is a clean slice of the text. A
        slice re-tokenized on its own can take more tokens than its window
        did; the window then gives back tokens until the hard maximum holds,
        and the next window starts where this one ended (minus the overlap),
        so no text is skipped. A window is re-counted without re-tokenizing
        it (services/chunker/token_map.py, ADR 0019): between its first and
        last context-free piece boundary it keeps the whole text's tokens,
        and only the edges outside them are encoded again.
        """
        size, overlap = self.values["chunk_size"], self.values["chunk_overlap"]
        token_map = source.token_map
        offsets = token_map.offsets
        total = len(token_map)
        chunks = []
        start = 0
        while start < total:
            end = min(start + size, total)
            count = token_map.count(start, end)
            while count > size:
                end -= 1
                count = token_map.count(start, end)
            if offsets[start] < offsets[end]:
                chunks.append(self.make_chunk(source, len(chunks), int(offsets[start]), int(offsets[end]), count))
            if end == total:
                break
            start = max(end - overlap, start + 1)
        return chunks
