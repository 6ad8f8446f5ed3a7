"""sentence_window: index single sentences, widen them at query time."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.spans import NEWLINE, Spans
from services.chunker.strategies.structure import HeadingPaths


@REGISTRY.register
class SentenceWindow(Strategy):
    name = "sentence_window"
    expansion = common_pb2.EXPANSION_KIND_WINDOW
    description = (
        "Small-to-big: indexes units of 1 to 3 sentences; each hit comes back with the window units on either side."
    )
    knobs = (
        Knob(
            "window",
            chunker_pb2.KNOB_TYPE_INT,
            2,
            "Units returned on each side of a hit (applied at query time).",
            0,
            20,
            query_time=True,
        ),
        Knob("sentences_per_unit", chunker_pb2.KNOB_TYPE_INT, 1, "Consecutive sentences in one indexed unit.", 1, 3),
        Knob(
            "max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            256,
            "Hard maximum tokens per unit; a longer sentence is split at line breaks, then spaces.",
            16,
            8192,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext | None = None):
        """Units are role "sentence", numbered in document order, so the
        retriever can fetch the window around a hit by chunk id."""
        index = Spans.of(source)
        spans = index.sentences()  # within the tree's blocks: a "# " paragraph is no heading
        if not spans:
            return []
        paths = HeadingPaths(source.tree)
        size, limit = self.values["sentences_per_unit"], self.values["max_tokens"]
        units = []
        for i in range(0, len(spans), size):
            start, end = spans[i][0], spans[min(i + size, len(spans)) - 1][1]
            count = index.exact(start, end)
            units += [(start, end, count)] if count <= limit else index.split(start, end, limit, level=NEWLINE)
        return [
            self.make_chunk(
                source, i, start, end, count, role=common_pb2.CHUNK_ROLE_SENTENCE, heading_path=paths.at(start)
            )
            for i, (start, end, count) in enumerate(units)
        ]
