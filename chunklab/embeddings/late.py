"""Late chunking: the vectors of many spans of a text from one pass of the model over it.

A model like all-MiniLM-L6-v2 makes a text's vector as the mean of its word pieces' last
hidden states. Late chunking (Günther et al., 2024) runs the model once over a longer text
and takes the mean over the word pieces of each span instead, so every span's vector has
seen the text around it and no span is encoded twice (ADR 0129).

The text is tokenized once and read in passes of at most the model's max_tokens word
pieces, each cut where a span begins (a span longer than a pass is cut inside). A pass's
[CLS] row counts with the span of its first word piece and its [SEP] row with its last's,
so a span that is a whole pass gets exactly the model's own vector of its text. What a
caller gets are sums, one row per span: the vector of any run of consecutive spans is
their rows added and made unit length (the mean over all their word pieces).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunklab.embeddings.base import TokenEncoder, unit_rows


def owners(offsets: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """For each word piece, the index of the span its first character is in (-1: none).
    Spans are [start, end) character ranges in order, not overlapping."""
    if not len(offsets):
        return np.zeros(0, dtype=np.int64)
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    first = offsets[:, 0]
    k = np.searchsorted(starts, first, side="right") - 1
    inside = (k >= 0) & (first < ends[np.maximum(k, 0)])
    return np.where(inside, k, -1)


def passes(owner: np.ndarray, width: int) -> list[tuple[int, int]]:
    """Word-piece ranges [start, end) of at most `width`, covering every word piece,
    each ending where a span begins unless one span is longer than a pass."""
    n, out, start = len(owner), [], 0
    begins = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if n else np.zeros(0, dtype=np.int64)
    while start < n:
        end = min(start + width, n)
        if end < n:
            at = begins[np.searchsorted(begins, end, side="right") - 1]
            end = int(at) if at > start else end
        out.append((start, end))
        start = end
    return out


def span_sums(encoder: TokenEncoder, text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """One float64 row per span: the sum of the last hidden states of its word pieces
    (and of a pass's special tokens at its edges), read in passes of the model's
    max_tokens. A span without word pieces (white space) is a zero row."""
    return many_span_sums(encoder, [(text, spans)])[0]


def many_span_sums(encoder: TokenEncoder, items: Sequence[tuple[str, Sequence[tuple[int, int]]]]) -> list[np.ndarray]:
    """span_sums of several texts, their passes run through the model together (longest
    first, in the provider's batches, so that a batch pads little)."""
    layouts, work = [], []
    for text, spans in items:
        if not spans:
            layouts.append((np.zeros(0, dtype=np.int64), []))
            continue
        ids, offsets = encoder.tokenize(text)
        owner = owners(offsets, spans)
        kept = owner >= 0  # word pieces outside every span are left out of the passes
        ids, owner = ids[kept], owner[kept]
        ranges = passes(owner, encoder.max_tokens - 2)
        layouts.append((owner, ranges))
        work += [ids[a:b] for a, b in ranges]
    states = iter(encoder.encode(work))
    out = []
    for (_, spans), (owner, ranges) in zip(items, layouts):
        sums = np.zeros((len(spans), encoder.dimension), dtype=np.float64)
        for a, b in ranges:
            rows, own = next(states), owner[a:b]
            # A pass's word pieces are in span order, so each span is one run of rows (np.add.at is 30x slower).
            runs = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
            sums[own[runs]] += np.add.reduceat(rows[1:-1], runs, axis=0)
            sums[own[0]] += rows[0]
            sums[own[-1]] += rows[-1]
        out.append(sums)
    return out


def window_vectors(sums: np.ndarray, reach: int) -> np.ndarray:
    """Row k: the unit-length mean over the word pieces of spans k - reach .. k + reach."""
    n = len(sums)
    running = np.concatenate([np.zeros((1, sums.shape[1])), np.cumsum(sums, axis=0)])
    k = np.arange(n)
    return unit_rows(running[np.minimum(k + reach + 1, n)] - running[np.maximum(k - reach, 0)])
