"""cluster_semantic: small pieces grouped to maximise within-chunk similarity
(the Chroma chunking report's IoU leader, ClusterSemanticChunker; ADR 0056)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.clustering import optimal_groups
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths

Piece = tuple[int, int, int]  # (start, end, tokens)


def clustered(
    source: SourceDocument,
    context: ChunkingContext,
    piece_tokens: int,
    max_tokens: int,
    embed_pieces: Callable[[list[Piece]], np.ndarray] | None = None,
) -> tuple[Spans, list[Piece], list[tuple[int, int, int, int, int]], np.ndarray]:
    """The document's pieces (the separator cascade at piece_tokens), their
    optimal groups under max_tokens: (start, end, tokens, first piece, end
    piece) per group, and the pieces' vectors (each piece's text embedded,
    unless embed_pieces makes them otherwise). A group runs from its first
    piece's start to its last piece's end, so only white space lies between
    groups."""
    text = source.text
    index = Spans.of(source)
    pieces = index.split(0, len(text), piece_tokens)
    if not pieces:
        return index, [], [], np.zeros((0, 0), dtype=np.float32)
    if embed_pieces is None:
        vectors = np.asarray(context.embed([text[a:b] for a, b, _ in pieces]), dtype=np.float32)
    else:
        vectors = np.asarray(embed_pieces(pieces), dtype=np.float32)
    counts: dict[tuple[int, int], int] = {}

    def tokens_of(first: int, end: int) -> int:
        key = (first, end)
        if key not in counts:
            counts[key] = pieces[first][2] if end == first + 1 else index.exact(pieces[first][0], pieces[end - 1][1])
        return counts[key]

    groups = optimal_groups(vectors, lambda first, end: tokens_of(first, end) <= max_tokens)
    return index, pieces, [(pieces[a][0], pieces[b - 1][1], tokens_of(a, b), a, b) for a, b in groups], vectors


@REGISTRY.register
class ClusterSemantic(Strategy):
    name = "cluster_semantic"
    description = (
        "Cuts the text into small pieces, embeds them and groups consecutive pieces so that the sum of "
        "within-chunk similarity is as large as possible, each chunk at most max_tokens."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob(
            "piece_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            50,
            "Maximum tokens per piece (the separator cascade cuts the text into pieces this big).",
            4,
            2048,
        ),
        Knob(
            "max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            200,
            "Hard maximum tokens per chunk (a group of whole pieces).",
            16,
            8192,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """Pieces of at most piece_tokens (headers, blank lines, line breaks,
        sentence ends, spaces), one embedding each; the segmentation into
        groups of consecutive pieces with the largest total within-group
        similarity above the document's mean, found by dynamic programming."""
        _, _, groups, _ = clustered(source, context, self.values["piece_tokens"], self.values["max_tokens"])
        paths = HeadingPaths(source.tree)
        return [
            self.make_chunk(source, i, start, end, count, heading_path=paths.at(start))
            for i, (start, end, count, _, _) in enumerate(groups)
        ]
