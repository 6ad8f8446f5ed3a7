"""contextual_structure: structure chunks with a labelled, LLM-situated header."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.contextual import situate
from services.chunker.strategies.markdown_structure import structure_pieces
from services.chunker.strategies.spans import Spans


def enriched_text(document: str, heading_path: list[str], situating: str, content: str) -> str:
    """Document / Section / Article / Context / Content, one per line. Section
    is the top heading, Article the deepest (when deeper than the top); a
    line with nothing to say is left out."""
    lines = [f"Document: {document}"]
    if heading_path:
        lines.append(f"Section: {heading_path[0]}")
    if len(heading_path) > 1:
        lines.append(f"Article: {heading_path[-1]}")
    lines += [f"Context: {situating}", f"Content: {content}"]
    return "\n".join(lines)


@REGISTRY.register
class ContextualStructure(Strategy):
    name = "contextual_structure"
    description = (
        "markdown_structure chunks embedded as Document / Section / Article / Context / Content, "
        "the context written by the LLM from the whole document."
    )
    requires_llm = True
    knobs = (
        Knob(
            "max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            512,
            "Hard maximum tokens of a chunk's content (the labelled header comes on top).",
            16,
            8192,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        doc = source.document
        pieces = structure_pieces(source, self.values["max_tokens"])
        index = Spans.of(source)
        contexts = situate(context, index, [(a, b) for a, b, _, _ in pieces])
        title = doc.metadata.get("title") or doc.name
        chunks = []
        for i, ((start, end, count, path), situating) in enumerate(zip(pieces, contexts)):
            chunk = self.make_chunk(source, i, start, end, count, heading_path=path)
            chunk.enriched_content = enriched_text(title, path, situating, chunk.content)
            chunks.append(chunk)
        return chunks
