"""semantic_parent_child: paragraphs clustered into parents by similarity."""

from __future__ import annotations

import numpy as np

from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.families import Family, family_chunks
from services.chunker.strategies.spans import NEWLINE, Spans
from services.chunker.strategies.structure import HeadingPaths, paragraphs_with_headings


@REGISTRY.register
class SemanticParentChild(Strategy):
    name = "semantic_parent_child"
    expansion = common_pb2.EXPANSION_KIND_PARENT
    description = (
        "Consecutive paragraphs of one section join one parent while they stay similar to it; "
        "paragraphs are the searchable children, parents are what the LLM sees."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob(
            "threshold",
            chunker_pb2.KNOB_TYPE_DOUBLE,
            0.5,
            "A paragraph less similar than this to the current parent starts a new one.",
            0.0,
            1.0,
        ),
        Knob(
            "child_max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            256,
            "Hard maximum tokens per child; longer paragraphs are cut into pieces.",
            16,
            8192,
        ),
        Knob("parent_max_tokens", chunker_pb2.KNOB_TYPE_INT, 1024, "Hard maximum tokens per parent.", 16, 32768),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """Children are paragraphs (a heading joins the paragraph after it;
        long paragraphs are cut into pieces). A child joins the current
        parent when it is in the parent's section, its cosine similarity to
        the parent's mean embedding is at least threshold and the parent stays
        within parent_max_tokens (ADR 0012); a parent never spans two sections
        (ADR 0111)."""
        text = source.text
        index = Spans.of(source)
        limit = self.values["child_max_tokens"]
        children: list[tuple[int, int, int]] = []
        for start, end in paragraphs_with_headings(text, source.tree):
            count = index.exact(start, end)
            children += [(start, end, count)] if count <= limit else index.split(start, end, limit, level=NEWLINE)
        if not children:
            return []
        vectors = np.asarray(context.embed([text[a:b] for a, b, _ in children]), dtype=np.float32)
        paths = HeadingPaths(source.tree)
        families: list[Family] = []
        total = np.zeros(vectors.shape[1], dtype=np.float32)
        for child, vector in zip(children, vectors):
            path = paths.at(child[1] - 1)  # the section of its paragraph (a heading joins the paragraph after it)
            if families:
                mean = total / (np.linalg.norm(total) or 1.0)
                family = families[-1]
                if (
                    path == family.heading_path
                    and float(mean @ vector) >= self.values["threshold"]
                    and index.exact(family.start, child[1]) <= self.values["parent_max_tokens"]
                ):
                    family.children.append(child)
                    family.end = child[1]
                    total += vector
                    continue
            families.append(Family(child[0], child[1], path, [child]))
            total = vector.copy()
        return family_chunks(self, source, index, families)
