"""semantic: cut where adjacent sentences stop being similar."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.similarity import bounded, cut_groups, embedded_sentences
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths


@REGISTRY.register
class Semantic(Strategy):
    name = "semantic"
    description = (
        "Embeds every sentence and cuts where adjacent sentences are less similar than threshold, "
        "keeping at least min_sentences per chunk and at most max_tokens."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob(
            "threshold",
            chunker_pb2.KNOB_TYPE_DOUBLE,
            0.5,
            "Cut where cosine similarity of adjacent sentences is below this.",
            0.0,
            1.0,
        ),
        Knob("min_sentences", chunker_pb2.KNOB_TYPE_INT, 3, "Sentences a chunk holds before it may be cut.", 1, 100),
        Knob(
            "max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            512,
            "Hard maximum tokens per chunk; bigger groups are cut at their weakest link.",
            16,
            8192,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """Sentences (chunklab.text.sentences) are embedded with the run's model;
        a chunk is the slice from its first sentence's start to its last
        sentence's end. The hard maximum wins over min_sentences (ADR 0011)."""
        index = Spans.of(source)
        spans, similarities = embedded_sentences(index, context)
        if not spans:
            return []
        paths = HeadingPaths(source.tree)
        pieces = []
        for group in cut_groups(similarities, self.values["threshold"], self.values["min_sentences"]):
            pieces += bounded(index, spans, similarities, group, self.values["max_tokens"])
        return [
            self.make_chunk(source, i, start, end, count, heading_path=paths.at(start))
            for i, (start, end, count, _) in enumerate(pieces)
        ]
