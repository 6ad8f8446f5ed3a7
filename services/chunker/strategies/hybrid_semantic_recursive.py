"""hybrid_semantic_recursive: semantic boundaries, then a token band."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.similarity import cut_groups, embedded_sentences
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths


@REGISTRY.register
class HybridSemanticRecursive(Strategy):
    name = "hybrid_semantic_recursive"
    description = (
        "Semantic boundaries between sentences, then the recursive cascade splits groups above max_tokens "
        "and groups below min_tokens join their more similar neighbour."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob(
            "threshold",
            chunker_pb2.KNOB_TYPE_DOUBLE,
            0.64,
            "Cut where cosine similarity of adjacent sentences is below this.",
            0.0,
            1.0,
        ),
        Knob(
            "min_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            128,
            "Chunks below this join a neighbour when the result fits max_tokens.",
            1,
            8192,
        ),
        Knob("max_tokens", chunker_pb2.KNOB_TYPE_INT, 384, "Hard maximum tokens per chunk.", 16, 8192),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """The band is best effort at the bottom and hard at the top: a chunk
        stays below min_tokens only when joining either neighbour would break
        max_tokens (ADR 0011)."""
        index = Spans.of(source)
        spans, similarities = embedded_sentences(index, context)
        if not spans:
            return []
        low, high = self.values["min_tokens"], self.values["max_tokens"]
        # pieces: [start, end, tokens]; links[k]: similarity between piece k and k+1
        pieces: list[list[int]] = []
        links: list[float] = []
        for i, j in cut_groups(similarities, self.values["threshold"]):
            if pieces:
                links.append(float(similarities[i - 1]))
            parts = index.split(spans[i][0], spans[j - 1][1], high)
            for n, (start, end, count) in enumerate(parts):
                if n:
                    links.append(1.0)  # pieces of one semantic group belong together
                pieces.append([start, end, count])
        self._join_small(index, pieces, links, low, high)
        paths = HeadingPaths(source.tree)
        return [
            self.make_chunk(source, i, start, end, count, heading_path=paths.at(start))
            for i, (start, end, count) in enumerate(pieces)
        ]

    @staticmethod
    def _join_small(index: Spans, pieces: list[list[int]], links: list[float], low: int, high: int) -> None:
        """Joins each piece under `low` to its more similar neighbour that
        still fits under `high`, smallest pieces first, until none can join."""
        while True:
            order = sorted((p[2], k) for k, p in enumerate(pieces) if p[2] < low)
            for _, k in order:
                options = []
                if k > 0:
                    options.append((links[k - 1], k - 1))
                if k + 1 < len(pieces):
                    options.append((links[k], k))
                for _, left in sorted(options, reverse=True):
                    count = index.exact(pieces[left][0], pieces[left + 1][1])
                    if count <= high:
                        pieces[left] = [pieces[left][0], pieces[left + 1][1], count]
                        del pieces[left + 1]
                        del links[left]
                        break
                else:
                    continue
                break  # indices moved: start over
            else:
                return
