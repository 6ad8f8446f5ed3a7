"""cluster_parent_child: small pieces are searched (each embedded with the
pieces beside it), their similarity clusters are what the LLM sees (ADR 0056)."""

from __future__ import annotations

import numpy as np

from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.cluster_semantic import clustered
from services.chunker.strategies.families import Family, family_chunks
from services.chunker.strategies.structure import HeadingPaths

ENCODED, POOLED = "encoded", "pooled"


@REGISTRY.register
class ClusterParentChild(Strategy):
    name = "cluster_parent_child"
    expansion = common_pb2.EXPANSION_KIND_PARENT
    description = (
        "Small pieces are the searchable children, each embedded with the pieces beside it; their parents are "
        "the groups cluster_semantic would make of them, so a hit brings back the passage it belongs to, once."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob(
            "child_max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            50,
            "Maximum tokens per child piece (the separator cascade cuts the text into pieces this big).",
            4,
            2048,
        ),
        Knob(
            "parent_max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            350,
            "Hard maximum tokens per parent (a group of whole children).",
            16,
            8192,
        ),
        Knob(
            "context_pieces",
            chunker_pb2.KNOB_TYPE_INT,
            1,
            "Pieces on each side embedded with a child (its enriched text); 0 embeds the piece alone.",
            0,
            5,
        ),
        Knob(
            "context_vectors",
            chunker_pb2.KNOB_TYPE_CHOICE,
            ENCODED,
            "How a child's vector is made: 'encoded' embeds its enriched text (the piece and its context pieces); "
            "'pooled' averages the vectors of those pieces, already embedded to cluster them: about 4x less "
            "embedding, about 1 point less recall on chroma-general (ADR 0120).",
            choices=(ENCODED, POOLED),
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """A child's vector stands for the piece and context_pieces pieces on
        each side (its enriched_content; its content stays the piece), so
        neighbouring children rank together and a question finds the
        passage rather than one sentence of it. A child's parent is its
        cluster: the consecutive pieces around it that are more alike than
        the document's average, at most parent_max_tokens."""
        index, pieces, groups, vectors = clustered(
            source, context, self.values["child_max_tokens"], self.values["parent_max_tokens"]
        )
        paths = HeadingPaths(source.tree)
        families = [Family(start, end, paths.at(start), pieces[a:b]) for start, end, _, a, b in groups]
        chunks = family_chunks(self, source, index, families)
        reach = self.values["context_pieces"]
        pooled = pooled_windows(vectors, reach) if self.values["context_vectors"] == POOLED else None
        text, last = source.text, len(pieces) - 1
        for chunk in chunks:
            if chunk.role == common_pb2.CHUNK_ROLE_CHILD:  # children are the pieces, in order
                k = chunk.chunk_index
                if reach:
                    chunk.enriched_content = text[pieces[max(k - reach, 0)][0] : pieces[min(k + reach, last)][1]]
                if pooled is not None:
                    context.vectors[chunk.chunk_id] = pooled[k]
        return chunks


def pooled_windows(vectors: np.ndarray, reach: int) -> np.ndarray:
    """Row k: the vector of pieces k - reach .. k + reach, the mean of the
    pieces' own vectors (already embedded to cluster them) made unit length,
    rather than the window's text embedded again (ADR 0120). With reach 0 a
    row is the piece's own vector."""
    n = len(vectors)
    running = np.concatenate([np.zeros((1, vectors.shape[1])), np.cumsum(vectors, axis=0, dtype=np.float64)])
    k = np.arange(n)
    sums = running[np.minimum(k + reach + 1, n)] - running[np.maximum(k - reach, 0)]
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)
