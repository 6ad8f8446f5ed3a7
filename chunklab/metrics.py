"""Labelled retrieval measures, counted in characters like the Chroma report's
public code (ranges are code-point offsets into the canonical text).

For one question with reference ranges R and retrieved chunk ranges C:
- intersection = the merged overlap of R with C, per document;
- recall = |intersection| / |R merged|;
- precision = |intersection| / sum of the chunks' lengths (text carried by two
  chunks counts twice: that is what the LLM reads twice);
- IoU = |intersection| / (sum of chunk lengths + |R merged| - |intersection|).
A hit is a chunk that overlaps a reference; hit rate says whether any does,
MRR is 1 / the rank of the first hit whose context overlaps a reference.

One owner for the evaluator's experiments and the UI's Query columns alike, so a
column's recall and IoU for a question are the numbers an experiment records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from chunklab.v1 import common_pb2, evaluator_pb2

Range = tuple[int, int]


@dataclass(frozen=True)
class Span:
    """A character range of one document."""

    document_id: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return max(0, self.end - self.start)


def merge(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, non-overlapping ranges covering the same characters."""
    merged: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def covered(ranges: Iterable[Range]) -> int:
    return sum(end - start for start, end in merge(ranges))


def intersect(a: Sequence[Range], b: Sequence[Range]) -> list[Range]:
    """The merged overlap of two sets of ranges."""
    a, b = merge(a), merge(b)
    out: list[Range] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _by_document(spans: Iterable[Span]) -> dict[str, list[Range]]:
    grouped: dict[str, list[Range]] = {}
    for span in spans:
        grouped.setdefault(span.document_id, []).append((span.start, span.end))
    return grouped


@dataclass(frozen=True)
class Overlap:
    recall: float
    precision: float
    iou: float
    intersection: int
    relevant: int
    retrieved: int


def overlap(references: Sequence[Span], retrieved: Sequence[Span]) -> Overlap:
    """Recall, precision and IoU of retrieved spans against reference spans."""
    refs = _by_document(references)
    chunks = _by_document(retrieved)
    relevant = sum(covered(r) for r in refs.values())
    retrieved_chars = sum(span.length for span in retrieved)
    inter = sum(covered(intersect(refs[d], chunks[d])) for d in refs.keys() & chunks.keys())
    union = retrieved_chars + relevant - inter
    return Overlap(
        recall=inter / relevant if relevant else 0.0,
        precision=inter / retrieved_chars if retrieved_chars else 0.0,
        iou=inter / union if union else 0.0,
        intersection=inter,
        relevant=relevant,
        retrieved=retrieved_chars,
    )


def chunk_span(chunk: common_pb2.Chunk) -> Span:
    return Span(chunk.document_id, chunk.start_char, chunk.end_char)


def reference_spans(references: Iterable[evaluator_pb2.Reference]) -> list[Span]:
    return [Span(r.document_id, r.start_char, r.end_char) for r in references]


def context_overlap(
    retrieved: Iterable[common_pb2.RetrievedChunk], references: Iterable[evaluator_pb2.Reference]
) -> Overlap:
    """Recall, precision and IoU of what the LLM sees (`retrieved_chunks`) against a
    question's references: the evaluator's `recall`, `precision` and `iou`."""
    return overlap(reference_spans(references), [chunk_span(item.chunk) for item in retrieved])


def overlap_ranges(span: Span, references: Iterable[Span]) -> list[Range]:
    """The characters of span that lie in a reference of its document, merged: what
    a page highlights inside a chunk."""
    return intersect(
        [(span.start, span.end)], [(r.start, r.end) for r in references if r.document_id == span.document_id]
    )


def touches(span: Span, references: Sequence[Span]) -> bool:
    """True when the span shares at least one character with a reference."""
    return any(
        r.document_id == span.document_id and min(r.end, span.end) > max(r.start, span.start) for r in references
    )


def reciprocal_rank(ranked: Sequence[Sequence[Span]], references: Sequence[Span]) -> float:
    """1 / the rank (from 1) of the first group that overlaps a reference; 0 if none.

    Each group is what one hit brought: the hit alone for hit-only MRR, the
    hit with its neighbours, window or parent for the expanded MRR.
    """
    for rank, group in enumerate(ranked, start=1):
        if any(touches(span, references) for span in group):
            return 1.0 / rank
    return 0.0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))
