"""One rule for compressed uploads: judged by what they inflate to (ADR 0053).

A DOCX's zip members and a PDF's streams are both refused by the bytes they
actually inflate to, counted a piece at a time as they come out (never held
whole), per part and in all. A compression ratio refuses nothing: repeated text
compresses hundreds to one and is a fine document. The limits below are the
defaults of both `docx_checks.ZipLimits` and `pdf_checks.PdfLimits`, so changing
one is one edit.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from chunklab.errors import ResourceExhausted

# Parts are inflated this much at a time: memory stays bounded by it.
PIECE_BYTES = 1 << 20
# Compressed input is fed in pieces this small, so that what zlib keeps of it
# between calls (its unconsumed tail, a copy) stays small too.
_INPUT_BYTES = 1 << 16
MAX_PART_BYTES = 100_000_000
MAX_TOTAL_BYTES = 500_000_000


@dataclass(frozen=True)
class Container:
    """What the refusals call a container and its parts."""

    kind: str  # "DOCX"
    bomb: str  # "a zip bomb"
    verb: str  # "unpacks"
    unit: str  # "file inside a DOCX"


class Budget:
    """Counts the bytes of one upload's parts as they inflate, refusing the
    upload once one part passes `max_part_bytes` or all together pass
    `max_total_bytes`."""

    def __init__(self, name: str, container: Container, max_part_bytes: int, max_total_bytes: int) -> None:
        self._name = name
        self._container = container
        self._max_part_bytes = max_part_bytes
        self._max_total_bytes = max_total_bytes
        self.total = 0

    def count(self, part: str, pieces: Iterable[bytes]) -> Iterator[bytes]:
        """The pieces of one part, passed on as they are counted."""
        c = self._container
        size = 0
        for piece in pieces:
            size += len(piece)
            self.total += len(piece)
            if size > self._max_part_bytes:
                raise ResourceExhausted(
                    f"{self._name!r} is refused as {c.bomb}: {part} {c.verb} to more than "
                    f"{size_text(self._max_part_bytes)} (the limit for one {c.unit})"
                )
            if self.total > self._max_total_bytes:
                raise ResourceExhausted(
                    f"{self._name!r} is refused as {c.bomb}: it {c.verb} to more than "
                    f"{size_text(self._max_total_bytes)} in all (the limit for a {c.kind})"
                )
            yield piece


def inflate(compressed: Iterable[bytes], wbits: int = zlib.MAX_WBITS | 32) -> Iterator[bytes]:
    """A zlib (or gzip) stream's output in pieces of at most PIECE_BYTES.

    Stops quietly where the data stops being valid or the stream ends: what
    counts is what comes out, and a reader gets no more from the same bytes.
    """
    inflater = zlib.decompressobj(wbits)
    try:
        for chunk in compressed:
            for start in range(0, len(chunk), _INPUT_BYTES):
                pending = chunk[start : start + _INPUT_BYTES]
                # A full piece may leave output pending inside zlib even when all input is taken.
                while not inflater.eof:
                    piece = inflater.decompress(pending, PIECE_BYTES)
                    pending = inflater.unconsumed_tail
                    if piece:
                        yield piece
                    if not pending and len(piece) < PIECE_BYTES:
                        break
                if inflater.eof:
                    return
    except zlib.error:
        return


def size_text(size: int) -> str:
    return f"{size / 1e6:g} MB" if size >= 1_000_000 else f"{size / 1e3:.0f} kB"
