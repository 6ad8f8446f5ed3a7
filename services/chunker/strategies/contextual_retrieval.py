"""contextual_retrieval: fixed-size chunks, each with an LLM-written context."""

from __future__ import annotations

from services.chunker.strategies.base import REGISTRY, ChunkingContext, SourceDocument, Strategy
from services.chunker.strategies.contextual import situate
from services.chunker.strategies.fixed_size import FixedSize
from services.chunker.strategies.spans import Spans
from services.chunker.strategies.structure import HeadingPaths


@REGISTRY.register
class ContextualRetrieval(Strategy):
    name = "contextual_retrieval"
    description = (
        "Anthropic's Contextual Retrieval: fixed_size chunks, each prefixed with a 1-2 sentence context "
        "written by the LLM from the whole document; the prefixed text is embedded."
    )
    requires_llm = True
    knobs = FixedSize.knobs

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """content is the exact fixed_size slice; enriched_content is
        context + blank line + content (ADR 0013)."""
        windows = [
            (c.start_char, c.end_char, c.token_count) for c in FixedSize(dict(self.values)).chunk(source, context)
        ]
        index = Spans.of(source)
        contexts = situate(context, index, [(a, b) for a, b, _ in windows])
        paths = HeadingPaths(source.tree)
        chunks = []
        for i, ((start, end, count), situating) in enumerate(zip(windows, contexts)):
            chunk = self.make_chunk(source, i, start, end, count, heading_path=paths.at(start))
            chunk.enriched_content = f"{situating}\n\n{chunk.content}"
            chunks.append(chunk)
        return chunks
