"""cluster_parent_child: small pieces are searched (each embedded with the
pieces beside it), their similarity clusters are what the LLM sees (ADR 0056)."""

from __future__ import annotations

import numpy as np

from chunklab.embeddings.base import unit_rows
from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.cluster_semantic import clustered
from services.chunker.strategies.families import Family, family_chunks
from services.chunker.strategies.structure import HeadingPaths

ENCODED, POOLED, LATE = "encoded", "pooled", "late"


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
            "embedding, about 1 point less recall on chroma-general (ADR 0120); 'late' reads each window once "
            "through the model's word-piece vectors: the child's vector is the window's, as 'encoded', and "
            "the piece's vector for clustering is the mean of its word pieces inside its window (late "
            "chunking), so no piece is embedded alone; a model without word-piece vectors (a remote "
            "endpoint, e5) embeds as 'encoded' (ADR 0129).",
            choices=(ENCODED, POOLED, LATE),
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """A child's vector stands for the piece and context_pieces pieces on
        each side (its enriched_content; its content stays the piece), so
        neighbouring children rank together and a question finds the
        passage rather than one sentence of it. A child's parent is its
        cluster: the consecutive pieces around it that are more alike than
        the document's average, at most parent_max_tokens."""
        mode, reach = self.values["context_vectors"], self.values["context_pieces"]
        windows: list[np.ndarray] = []

        def in_windows(pieces) -> np.ndarray:
            piece_rows, window_rows = window_sums(context, source.text, pieces, reach)
            windows.append(window_rows)
            return piece_rows

        late_pieces = in_windows if mode == LATE and context.embed_spans is not None else None
        index, pieces, groups, vectors = clustered(
            source, context, self.values["child_max_tokens"], self.values["parent_max_tokens"], late_pieces
        )
        paths = HeadingPaths(source.tree)
        families = [Family(start, end, paths.at(start), pieces[a:b]) for start, end, _, a, b in groups]
        chunks = family_chunks(self, source, index, families)
        made = pooled_windows(vectors, reach) if mode == POOLED else windows[0] if windows else None
        text, last = source.text, len(pieces) - 1
        for chunk in chunks:
            if chunk.role == common_pb2.CHUNK_ROLE_CHILD:  # children are the pieces, in order
                k = chunk.chunk_index
                if reach:
                    chunk.enriched_content = text[pieces[max(k - reach, 0)][0] : pieces[min(k + reach, last)][1]]
                if made is not None:  # the run embeds the enriched text of a child without one
                    context.vectors[chunk.chunk_id] = made[k]
        return chunks


def window_sums(context: ChunkingContext, text: str, pieces, reach: int) -> tuple[np.ndarray, np.ndarray]:
    """Each child's window (pieces k - reach .. k + reach, its enriched text) read once
    through the model's word-piece vectors (ADR 0129, 0130). Returns the pieces' vectors,
    each the mean of the piece's word pieces inside its window (late chunking), which the
    clustering uses instead of the piece embedded alone; and the windows' vectors, each
    the mean of all its word pieces: the model's own vector of that text (a window over
    the model's 256 word pieces is read whole in passes, where embedding it would cut it)."""
    last, items = len(pieces) - 1, []
    for k in range(len(pieces)):
        first, end = max(k - reach, 0), min(k + reach, last)
        base = pieces[first][0]
        spans = [(pieces[j][0] - base, pieces[j][1] - base) for j in range(first, end + 1)]
        items.append((text[base : pieces[end][1]], spans))
    sums = context.embed_spans(items)
    own = np.array([rows[k - max(k - reach, 0)] for k, rows in enumerate(sums)])
    return unit_rows(own), unit_rows(np.array([rows.sum(axis=0) for rows in sums]))


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
