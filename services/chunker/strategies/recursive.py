"""recursive: the separator cascade, merged back up to the chunk size."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths

MIN_CHUNK_SIZE = 16


@REGISTRY.register
class Recursive(Strategy):
    name = "recursive"
    description = (
        "Splits at Markdown headers, then blank lines, newlines, sentence ends and spaces, "
        "and merges the parts back up to chunk_size cl100k_base tokens."
    )
    knobs = (
        Knob("chunk_size", chunker_pb2.KNOB_TYPE_INT, 512, "Tokens per chunk (a hard maximum).", MIN_CHUNK_SIZE, 8192),
        Knob(
            "chunk_overlap",
            chunker_pb2.KNOB_TYPE_INT,
            64,
            "Up to this many tokens of whole trailing parts repeated from the previous chunk.",
            0,
            8191,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext | None = None):
        """The whole text through the cascade (ADR 0010): parts that fit are
        merged greedily, parts too big are split at the next separator, and
        the last resort is token windows. Chunks are trimmed exact slices."""
        text = source.text
        if not text or text.isspace():
            return []
        spans = Spans.of(source)
        paths = HeadingPaths(source.tree)
        pieces = spans.split(0, len(text), self.values["chunk_size"], overlap=self.values["chunk_overlap"])
        return [
            self.make_chunk(source, i, start, end, count, heading_path=paths.at(start))
            for i, (start, end, count) in enumerate(pieces)
        ]
