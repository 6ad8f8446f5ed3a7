"""fixed_size: token windows with overlap, the baseline."""

from __future__ import annotations

from chunklab import tokens
from chunklab.errors import InvalidArgument
from chunklab.v1 import chunker_pb2
from services.chunker.strategies.base import REGISTRY, Knob, SourceDocument, Strategy


@REGISTRY.register
class FixedSize(Strategy):
    name = "fixed_size"
    description = "Token windows of chunk_size cl100k_base tokens, each overlapping the previous by chunk_overlap."
    knobs = (
        Knob("chunk_size", chunker_pb2.KNOB_TYPE_INT, 512, "Tokens per chunk (a hard maximum).", 1, 8192),
        Knob("chunk_overlap", chunker_pb2.KNOB_TYPE_INT, 64, "Tokens shared with the previous chunk.", 0, 8191),
    )

    def validate(self) -> None:
        if self.values["chunk_overlap"] >= self.values["chunk_size"]:
            raise InvalidArgument(
                f"fixed_size.chunk_overlap ({self.values['chunk_overlap']}) must be smaller than "
                f"chunk_size ({self.values['chunk_size']})"
            )

    def windows(self, text: str) -> list[tuple[int, int]]:
        """Character ranges of the token windows.

        Window boundaries come from the tokenization of the whole text; a
        boundary inside a multi-byte character moves to that character's
        start, so every range is a clean slice of the text.
        """
        size, overlap = self.values["chunk_size"], self.values["chunk_overlap"]
        ids = tokens.encoding().encode_ordinary(text)
        offsets = tokens.token_char_offsets(text, ids)
        ranges = []
        start = 0
        while start < len(ids):
            end = min(start + size, len(ids))
            if offsets[start] < offsets[end]:
                ranges.append((int(offsets[start]), int(offsets[end])))
            if end == len(ids):
                break
            start = end - overlap
        return ranges

    def chunk(self, source: SourceDocument):
        size = self.values["chunk_size"]
        text = source.text
        ranges = self.windows(text)
        counts = tokens.encoding().encode_ordinary_batch([text[s:e] for s, e in ranges])
        chunks = []
        for (start, end), encoded in zip(ranges, counts):
            count = len(encoded)
            # A slice re-tokenized on its own can take a token more than its
            # window did; give back characters until the hard maximum holds.
            while count > size and end > start + 1:
                end -= 1
                count = tokens.count(text[start:end])
            chunks.append(self.make_chunk(source, len(chunks), start, end, count))
        return chunks
